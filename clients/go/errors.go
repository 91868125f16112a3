package licenceclient

import "fmt"

// ServerError is the server's error answer `{"error": {"code", "message", "details"}}` with its HTTP status.
type ServerError struct {
	Code    string
	Status  int
	Message string
	Details map[string]interface{}
}

func (e *ServerError) Error() string { return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message) }

// NetworkError: no answer, a timeout, or an answer that is not the API.
type NetworkError struct {
	Message string
	Err     error
}

func (e *NetworkError) Error() string { return e.Message }
func (e *NetworkError) Unwrap() error { return e.Err }

// VerificationError is an answer or licence file that does not verify; Reason is a stable reason code.
type VerificationError struct {
	Reason  string
	Message string
}

func (e *VerificationError) Error() string { return e.Reason + ": " + e.Message }

func verr(reason, message string) *VerificationError {
	return &VerificationError{Reason: reason, Message: message}
}
