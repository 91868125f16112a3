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

// StateError: the state file cannot be kept at Options.StatePath: its folder cannot be created (mode 0700) or
// written, or the file cannot be written. New returns it before any network call; Code is "STATE_PATH".
type StateError struct {
	Code    string
	Path    string
	Message string
	Err     error
}

func (e *StateError) Error() string { return e.Code + ": " + e.Message }
func (e *StateError) Unwrap() error { return e.Err }

func stateErr(path, message string, err error) *StateError {
	return &StateError{Code: "STATE_PATH", Path: path, Message: message + ": " + err.Error(), Err: err}
}
