// Package licenceclient is the licence server's client for Go: activation, signed validation with a nonce,
// usage metering, heartbeats, licence files, air-gapped activation and an offline Check. Answers are accepted
// only as signed envelopes, verified against the keys the application ships and the keys they endorse.
package licenceclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

var fingerprintPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// Options configure a Client. ServerURL, StatePath, AppSalt and at least one of PublicKeys are required.
type Options struct {
	ServerURL string // base URL; a path is kept (https://vendor.example/licensing/)
	StatePath string // the one state file, written atomically
	AppSalt   string // salts the default fingerprint and keys the state file's HMAC
	// PublicKeys are the keys shipped with the application (ParseKeyList reads a /public-keys answer or a JWK Set).
	PublicKeys []*PublicKey
	// RootKeys are offline root keys: they endorse signing keys and sign nothing else.
	RootKeys []*PublicKey
	// PinToShippedKeys trusts PublicKeys only: a key rotation then needs an application update. By default the client
	// follows endorsed rotations, as every official client does (docs/clients.md, Trust).
	PinToShippedKeys bool
	Product          string // sent on activation, required by Check
	// Fingerprint replaces the default (SHA-256 of the OS machine id and AppSalt); FingerprintFunc computes it.
	Fingerprint        string
	FingerprintFunc    func() (string, error)
	ClockTolerance     time.Duration // default 300 s
	MaxOfflineDays     int           // 0: no limit
	KeyRefreshInterval time.Duration // default 1 h: online calls fetch the key list first when it is older
	Timeout            time.Duration // per request, default 10 s
	Retries            int           // retries of safe requests, default 2; negative: none
	Now                func() time.Time
	HTTPClient         *http.Client
}

// License is the signed licence (the envelope's payload). Raw holds every member as received.
type License struct {
	LicenseKey         string           `json:"license_key"`
	Product            string           `json:"product"`
	LicenseType        string           `json:"license_type"`
	IssuedAt           string           `json:"issued_at"`
	ExpiresAt          *string          `json:"expires_at"`
	ActivatedAt        string           `json:"activated_at"`
	MachineFingerprint string           `json:"machine_fingerprint"`
	GraceDays          int              `json:"grace_days"`
	Limits             map[string]int64 `json:"limits"`
	Features           []string         `json:"features"`
	Customer           struct {
		Name  string  `json:"name"`
		Email *string `json:"email"`
	} `json:"customer"`
	KeyID         string                 `json:"key_id"`
	SignedAt      string                 `json:"signed_at"`
	Policy        *Policy                `json:"policy"`
	FileIssuedAt  string                 `json:"file_issued_at"`
	FileExpiresAt string                 `json:"file_expires_at"`
	Raw           map[string]interface{} `json:"-"`
}

// Policy is the licence's seat policy.
type Policy struct {
	HeartbeatTimeoutSeconds   *int64  `json:"heartbeat_timeout_seconds"`
	MaxDeactivationsPer30Days *int64  `json:"max_deactivations_per_30_days"`
	LicenseFileTTLDays        int64   `json:"license_file_ttl_days"`
	MaxUses                   *int64  `json:"max_uses"`
	UsesPeriod                *string `json:"uses_period"`
}

// ValidationAnswer is a verified /validate answer (the envelope's payload).
type ValidationAnswer struct {
	Valid              bool    `json:"valid"`
	Status             string  `json:"status"`
	ExpiresAt          *string `json:"expires_at"`
	Revoked            bool    `json:"revoked"`
	GraceEndsAt        *string `json:"grace_ends_at"`
	Code               *string `json:"code"`
	Nonce              string  `json:"nonce"`
	LicenseKey         string  `json:"license_key"`
	MachineFingerprint string  `json:"machine_fingerprint"`
	CheckedAt          string  `json:"checked_at"`
	KeyID              string  `json:"key_id"`
	Uses               *int64  `json:"uses"`
	MaxUses            *int64  `json:"max_uses"`
}

// UsageAnswer is a verified /usage answer: the count after this call (nil when the licence is not metered).
type UsageAnswer struct {
	Uses               *int64  `json:"uses"`
	MaxUses            *int64  `json:"max_uses"`
	Remaining          *int64  `json:"remaining"`
	PeriodStart        *string `json:"period_start"`
	PeriodEnd          *string `json:"period_end"`
	Nonce              string  `json:"nonce"`
	LicenseKey         string  `json:"license_key"`
	MachineFingerprint string  `json:"machine_fingerprint"`
	CheckedAt          string  `json:"checked_at"`
	KeyID              string  `json:"key_id"`
}

// UpdateQuery is what CheckForUpdate asks about. Channel: stable (default), beta or alpha; Platform and Arch use
// Node's names (linux, darwin, win32; x64, arm64) and default to this program's.
type UpdateQuery struct {
	CurrentVersion string
	Channel        string
	Platform       string
	Arch           string
}

// UpdateArtifact is one downloadable file of an offered release: its signed size and digests (hex), and a link.
type UpdateArtifact struct {
	Filename     string `json:"filename"`
	Platform     string `json:"platform"`
	Arch         string `json:"arch"`
	Size         int64  `json:"size"`
	SHA256       string `json:"sha256"`
	SHA512       string `json:"sha512"`
	URL          string `json:"url"`
	URLExpiresAt string `json:"url_expires_at"`
}

// UpdateRelease is the release an update check offers.
type UpdateRelease struct {
	Version     string           `json:"version"`
	Channel     string           `json:"channel"`
	Notes       string           `json:"notes"`
	PublishedAt string           `json:"published_at"`
	Artifacts   []UpdateArtifact `json:"artifacts"`
}

// UpdateCheckAnswer is a verified /releases/check answer; Update is nil when nothing newer may be had.
type UpdateCheckAnswer struct {
	Update             *UpdateRelease `json:"update"`
	Nonce              string         `json:"nonce"`
	LicenseKey         string         `json:"license_key"`
	MachineFingerprint string         `json:"machine_fingerprint"`
	CheckedAt          string         `json:"checked_at"`
	KeyID              string         `json:"key_id"`
}

// HeartbeatAnswer is the /heartbeat answer.
type HeartbeatAnswer struct {
	Valid                   bool    `json:"valid"`
	Status                  string  `json:"status"`
	Code                    *string `json:"code"`
	HeartbeatTimeoutSeconds *int64  `json:"heartbeat_timeout_seconds"`
	NextHeartbeatBefore     *string `json:"next_heartbeat_before"`
}

// DeactivationAnswer is the /deactivate answer.
type DeactivationAnswer struct {
	Message       string `json:"message"`
	CanReactivate bool   `json:"can_reactivate"`
}

// LicenseFileAnswer is the /license-file answer (the file is version 2: it carries an envelope).
type LicenseFileAnswer struct {
	LicenseFile   string `json:"license_file"`
	FileExpiresAt string `json:"file_expires_at"`
}

// MachineInfo is sent on activation; empty fields take the OS's values.
type MachineInfo struct {
	Hostname   string
	OS         string
	AppVersion string
}

// UsageOptions: Increment 1..1000000 (0 means 1); IdempotencyKey is generated when empty.
type UsageOptions struct {
	Increment      int64
	IdempotencyKey string
}

// CheckResult is the offline decision: OK with Status "active" or "grace", or a Reason code and a Message.
type CheckResult struct {
	OK            bool
	Reason        string
	Message       string
	Status        string
	License       *License
	Source        string // "license_file" or "activation"
	ExpiresAt     *time.Time
	GraceEndsAt   *time.Time
	FileExpiresAt *time.Time
}

// Client is the licence server's client; safe for concurrent use.
type Client struct {
	opts        Options
	store       *stateFile
	mu          sync.Mutex
	fingerprint string
}

// New checks the options and returns a client.
func New(opts Options) (*Client, error) {
	if opts.AppSalt == "" {
		return nil, errors.New("AppSalt is required")
	}
	if opts.StatePath == "" {
		return nil, errors.New("StatePath is required")
	}
	if len(opts.PublicKeys) == 0 {
		return nil, errors.New("PublicKeys is required: ship the server's public key(s) with the application")
	}
	if opts.ClockTolerance == 0 {
		opts.ClockTolerance = 300 * time.Second
	}
	if opts.KeyRefreshInterval == 0 {
		opts.KeyRefreshInterval = time.Hour
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Retries == 0 {
		opts.Retries = 2
	} else if opts.Retries < 0 {
		opts.Retries = 0
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	client := &Client{opts: opts, store: newStateFile(opts.StatePath, opts.AppSalt)}
	// The folder exists (made 0700) and is writable before any call binds a seat (docs/clients.md, The state file).
	if err := client.store.prepare(); err != nil {
		return nil, err
	}
	return client, nil
}

// ParseKeyList reads shipped keys from a /public-keys answer or a JWK Set ({"keys": [...]}).
func ParseKeyList(raw []byte) ([]*PublicKey, error) {
	var list struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	var keys []*PublicKey
	for _, entry := range list.Keys {
		key, err := ParsePublicKey(entry)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// Fingerprint is this machine's fingerprint: the option, or SHA-256 of the OS machine id and the salt.
func (c *Client) Fingerprint() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fingerprint != "" {
		return c.fingerprint, nil
	}
	value := c.opts.Fingerprint
	if c.opts.FingerprintFunc != nil {
		var err error
		if value, err = c.opts.FingerprintFunc(); err != nil {
			return "", err
		}
	}
	if value == "" {
		value = DefaultFingerprint(c.opts.AppSalt, MachineID())
	}
	if !fingerprintPattern.MatchString(value) {
		return "", errors.New(`a fingerprint is "sha256:" followed by 64 lower-case hex digits`)
	}
	c.fingerprint = value
	return value, nil
}

// MachineID is the OS's stable id of this installation (/etc/machine-id on Linux); the host name otherwise.
func MachineID() string {
	for _, path := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if raw, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(raw)) != "" {
			return strings.TrimSpace(string(raw))
		}
	}
	host, _ := os.Hostname()
	return "hostname:" + host
}

// DefaultFingerprint is SHA-256 of the machine id and the application salt: the raw id never leaves the machine.
func DefaultFingerprint(appSalt, machineID string) string {
	sum := sha256.Sum256([]byte(appSalt + "\x00" + machineID))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ---- online calls ----------------------------------------------------------------------------------------------

// Activate binds this machine's seat, verifies and stores the licence, and returns it.
func (c *Client) Activate(ctx context.Context, licenseKey string, machine MachineInfo) (*License, error) {
	if err := c.store.prepare(); err != nil {
		return nil, err
	}
	body, err := c.activationBody(licenseKey, machine)
	if err != nil {
		return nil, err
	}
	c.refreshKeysIfDue(ctx)
	answer, err := c.request(ctx, "POST", "/api/v1/activate", body, true)
	if err != nil {
		return nil, err
	}
	return c.StoreActivation(ctx, answer)
}

// StartTrial starts the product's self-service trial on this machine (docs/client-api.md, Trials; Options.Product is
// required): the signed trial licence is verified and kept like an activation. One trial per product and machine,
// ever: a second is a *ServerError TRIAL_ALREADY_USED; a product without trials TRIALS_DISABLED. Never retried: a
// retry after a lost answer would meet TRIAL_ALREADY_USED.
func (c *Client) StartTrial(ctx context.Context, machine MachineInfo, customerEmail string) (*License, error) {
	if c.opts.Product == "" {
		return nil, errors.New("StartTrial needs Options.Product")
	}
	if err := c.store.prepare(); err != nil {
		return nil, err
	}
	body, err := c.machineBody(machine)
	if err != nil {
		return nil, err
	}
	body["product"] = c.opts.Product
	if customerEmail != "" {
		body["customer_email"] = customerEmail
	}
	c.refreshKeysIfDue(ctx)
	answer, err := c.request(ctx, "POST", "/api/v1/trials", body, false)
	if err != nil {
		return nil, err
	}
	return c.StoreActivation(ctx, answer)
}

// Deactivate frees the seat (never retried: limits count it) and clears the stored licence.
func (c *Client) Deactivate(ctx context.Context) (*DeactivationAnswer, error) {
	var answer DeactivationAnswer
	if err := c.postSeat(ctx, "/api/v1/deactivate", false, nil, &answer); err != nil {
		return nil, err
	}
	return &answer, c.update(func(s *clientState) {
		s.Activation, s.LicenseFile, s.LastValidation, s.SeatSeenAt, s.SeatLost = nil, nil, nil, "", nil
	})
}

// Validate checks online with a fresh nonce; the signed answer is verified and remembered for Check.
func (c *Client) Validate(ctx context.Context) (*ValidationAnswer, error) {
	c.refreshKeysIfDue(ctx)
	seat, err := c.seatBody()
	if err != nil {
		return nil, err
	}
	nonce := randomToken()
	raw, err := c.request(ctx, "POST", "/api/v1/validate", withMembers(seat, map[string]interface{}{"nonce": nonce, "envelope": true}), true)
	if err != nil {
		return nil, err
	}
	payload, err := c.VerifyAnswer(ctx, raw, nonce, seat["license_key"].(string))
	if err != nil {
		return nil, err
	}
	var answer ValidationAnswer
	if err := json.Unmarshal(payload, &answer); err != nil {
		return nil, verr("MALFORMED_PAYLOAD", "the validation answer has unexpected members")
	}
	return &answer, c.update(func(s *clientState) {
		s.LastValidation = &lastValidation{Valid: answer.Valid, Status: answer.Status, Code: answer.Code, CheckedAt: answer.CheckedAt}
		s.LatestSignedAt = later(s.LatestSignedAt, parseTime(answer.CheckedAt))
	})
}

// Usage counts uses of a metered licence; one idempotency key per call, so a retry counts once.
func (c *Client) Usage(ctx context.Context, options UsageOptions) (*UsageAnswer, error) {
	c.refreshKeysIfDue(ctx)
	seat, err := c.seatBody()
	if err != nil {
		return nil, err
	}
	if options.Increment == 0 {
		options.Increment = 1
	}
	if options.IdempotencyKey == "" {
		options.IdempotencyKey = randomToken()
	}
	nonce := randomToken()
	body := withMembers(seat, map[string]interface{}{"increment": options.Increment, "idempotency_key": options.IdempotencyKey, "nonce": nonce, "envelope": true})
	raw, err := c.request(ctx, "POST", "/api/v1/usage", body, true)
	if err != nil {
		return nil, err
	}
	payload, err := c.VerifyAnswer(ctx, raw, nonce, seat["license_key"].(string))
	if err != nil {
		return nil, err
	}
	var answer UsageAnswer
	if err := json.Unmarshal(payload, &answer); err != nil {
		return nil, verr("MALFORMED_PAYLOAD", "the usage answer has unexpected members")
	}
	return &answer, c.update(func(s *clientState) { s.LatestSignedAt = later(s.LatestSignedAt, parseTime(answer.CheckedAt)) })
}

// CheckForUpdate asks for the newest release above query.CurrentVersion this licence may download, on the channel or
// a more stable one, with an artifact for the platform (docs/releases.md); verified like a validate answer.
func (c *Client) CheckForUpdate(ctx context.Context, query UpdateQuery) (*UpdateCheckAnswer, error) {
	c.refreshKeysIfDue(ctx)
	seat, err := c.seatBody()
	if err != nil {
		return nil, err
	}
	if query.Platform == "" {
		query.Platform = nodePlatform(runtime.GOOS)
	}
	if query.Arch == "" {
		query.Arch = nodeArch(runtime.GOARCH)
	}
	nonce := randomToken()
	members := map[string]interface{}{"platform": query.Platform, "arch": query.Arch, "current_version": query.CurrentVersion, "nonce": nonce, "envelope": true}
	if c.opts.Product != "" {
		members["product"] = c.opts.Product
	}
	if query.Channel != "" {
		members["channel"] = query.Channel
	}
	raw, err := c.request(ctx, "POST", "/api/v1/releases/check", withMembers(seat, members), true)
	if err != nil {
		return nil, err
	}
	payload, err := c.VerifyAnswer(ctx, raw, nonce, seat["license_key"].(string))
	if err != nil {
		return nil, err
	}
	var answer UpdateCheckAnswer
	if err := json.Unmarshal(payload, &answer); err != nil {
		return nil, verr("MALFORMED_PAYLOAD", "the update check answer has unexpected members")
	}
	return &answer, c.update(func(s *clientState) { s.LatestSignedAt = later(s.LatestSignedAt, parseTime(answer.CheckedAt)) })
}

// DownloadUpdate streams an artifact of a verified update to target, checking its signed size, SHA-256 and SHA-512
// on the way; a mismatch removes the file and answers DIGEST_MISMATCH.
func (c *Client) DownloadUpdate(ctx context.Context, artifact UpdateArtifact, target string) error {
	request, err := http.NewRequestWithContext(ctx, "GET", artifact.URL, nil)
	if err != nil {
		return &NetworkError{Message: "download " + artifact.Filename + ": " + err.Error(), Err: err}
	}
	response, err := c.opts.HTTPClient.Do(request)
	if err != nil {
		return &NetworkError{Message: "download " + artifact.Filename + ": " + err.Error(), Err: err}
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		return &NetworkError{Message: fmt.Sprintf("download %s: answer %d", artifact.Filename, response.StatusCode)}
	}
	partial, err := os.CreateTemp(filepath.Dir(target), ".download-*.part")
	if err != nil {
		return err
	}
	defer os.Remove(partial.Name())
	sum256, sum512 := sha256.New(), sha512.New()
	size, err := io.Copy(io.MultiWriter(partial, sum256, sum512), response.Body)
	if closeErr := partial.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return &NetworkError{Message: "download " + artifact.Filename + ": " + err.Error(), Err: err}
	}
	if size != artifact.Size || hex.EncodeToString(sum256.Sum(nil)) != artifact.SHA256 || hex.EncodeToString(sum512.Sum(nil)) != artifact.SHA512 {
		return verr("DIGEST_MISMATCH", "the downloaded "+artifact.Filename+" is not the signed release's file")
	}
	return os.Rename(partial.Name(), target)
}

func nodePlatform(goos string) string {
	switch goos {
	case "windows":
		return "win32"
	case "darwin":
		return "darwin"
	}
	return "linux"
}

func nodeArch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x64"
	case "arm64":
		return "arm64"
	}
	return goarch
}

// Heartbeat sends one heartbeat: a success is the seat's last sign of life; NOT_ACTIVATED marks the seat lost.
func (c *Client) Heartbeat(ctx context.Context) (*HeartbeatAnswer, error) {
	seat, err := c.seatBody()
	if err != nil {
		return nil, err
	}
	sentAt := c.opts.Now()
	raw, err := c.request(ctx, "POST", "/api/v1/heartbeat", seat, true)
	var serverErr *ServerError
	if errors.As(err, &serverErr) && seatGone(serverErr.Code) {
		_ = c.update(func(s *clientState) { s.SeatLost = &seatLost{Code: serverErr.Code, At: formatTime(c.opts.Now())} })
	}
	if err != nil {
		return nil, err
	}
	var answer HeartbeatAnswer
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, &NetworkError{Message: "heartbeat: unexpected answer", Err: err}
	}
	if answer.Valid {
		err = c.update(func(s *clientState) { s.SeatSeenAt = later(s.SeatSeenAt, &sentAt) })
	}
	return &answer, err
}

// postSeat posts this machine's seat to path and decodes the answer into `into`.
func (c *Client) postSeat(ctx context.Context, path string, idempotent bool, members map[string]interface{}, into interface{}) error {
	seat, err := c.seatBody()
	if err != nil {
		return err
	}
	raw, err := c.request(ctx, "POST", path, withMembers(seat, members), idempotent)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return &NetworkError{Message: path + ": unexpected answer", Err: err}
	}
	return nil
}

func seatGone(code string) bool { return code == "NOT_ACTIVATED" || code == "INVALID_KEY" }

// HeartbeatLoopOptions: callbacks of the loop; FallbackInterval is used when the licence has no timeout (15 min).
type HeartbeatLoopOptions struct {
	OnBeat           func(*HeartbeatAnswer)
	OnError          func(error)
	OnSeatLost       func(*ServerError)
	FallbackInterval time.Duration
}

// HeartbeatLoop runs until Stop; Done is closed when it has stopped.
type HeartbeatLoop struct {
	cancel context.CancelFunc
	Done   <-chan struct{}
}

// Stop ends the loop.
func (l *HeartbeatLoop) Stop() { l.cancel() }

// StartHeartbeat beats a third of the licence's timeout apart with ±10 % jitter, backing off after failures but
// never later than the server's deadline; it stops after OnSeatLost.
func (c *Client) StartHeartbeat(options HeartbeatLoopOptions) *HeartbeatLoop {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if options.FallbackInterval == 0 {
		options.FallbackInterval = 15 * time.Minute
	}
	go func() {
		defer close(done)
		failures := 0
		var deadline time.Time
		wait := time.Duration(0)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			answer, err := c.Heartbeat(ctx)
			if err != nil {
				var serverErr *ServerError
				if errors.As(err, &serverErr) && seatGone(serverErr.Code) {
					if options.OnSeatLost != nil {
						options.OnSeatLost(serverErr)
					}
					return
				}
				if ctx.Err() != nil {
					return
				}
				if options.OnError != nil {
					options.OnError(err)
				}
				failures++
				backoff := math.Min(math.Pow(2, float64(failures)), 300)
				if !deadline.IsZero() {
					backoff = math.Min(backoff, math.Max(time.Until(deadline).Seconds()-1, 2)/2)
				}
				wait = jitter(time.Duration(backoff * float64(time.Second)))
				continue
			}
			failures = 0
			if options.OnBeat != nil {
				options.OnBeat(answer)
			}
			interval := options.FallbackInterval
			if answer.HeartbeatTimeoutSeconds != nil {
				interval = time.Duration(*answer.HeartbeatTimeoutSeconds) * time.Second / 3
			}
			if answer.NextHeartbeatBefore != nil {
				if t := parseTime(*answer.NextHeartbeatBefore); t != nil {
					deadline = *t
				}
			}
			wait = jitter(interval)
		}
	}()
	return &HeartbeatLoop{cancel: cancel, Done: done}
}

func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + mathrand.Float64()*0.2))
}

// LicenseFile fetches, verifies and stores a licence file for offline use.
func (c *Client) LicenseFile(ctx context.Context) (*LicenseFileAnswer, error) {
	c.refreshKeysIfDue(ctx)
	var answer LicenseFileAnswer
	if err := c.postSeat(ctx, "/api/v1/license-file", true, map[string]interface{}{"envelope": true}, &answer); err != nil {
		return nil, err
	}
	return &answer, c.storeLicenseFile(ctx, answer.LicenseFile)
}

// CreateActivationRequest is the text an air-gapped machine hands to staff (dashboard or admin API).
func (c *Client) CreateActivationRequest(licenseKey string, machine MachineInfo) (string, error) {
	body, err := c.activationBody(licenseKey, machine)
	if err != nil {
		return "", err
	}
	raw, _ := json.Marshal(body)
	return armor("ACTIVATION REQUEST", raw), nil
}

// ImportLicenseFile verifies and stores a licence file (e.g. the answer to an activation request), then checks it.
func (c *Client) ImportLicenseFile(text string) (CheckResult, error) {
	if err := c.storeLicenseFile(context.Background(), text); err != nil {
		return CheckResult{}, err
	}
	return c.Check(), nil
}

// RefreshKeys fetches /api/v1/public-keys: endorsed keys become trusted, revoked ones are dropped for good.
func (c *Client) RefreshKeys(ctx context.Context) ([]string, error) {
	raw, err := c.request(ctx, "GET", "/api/v1/public-keys", nil, true)
	if err != nil {
		return nil, err
	}
	var list struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(raw, &list) != nil || len(list.Keys) == 0 {
		return nil, verr("NO_KEYS", "the server published no public key")
	}
	if err := c.LearnKeys(list.Keys); err != nil {
		return nil, err
	}
	_, state := c.store.load()
	return sortedKeys(c.trusted(state)), nil
}

// LearnKeys stores a published key list (replacing the last one) and remembers every key it lists as revoked.
func (c *Client) LearnKeys(entries []json.RawMessage) error {
	_, revoked := parseEntries(entries)
	return c.update(func(s *clientState) {
		s.ServerKeys = entries
		ids := map[string]bool{}
		for _, id := range s.RevokedKeyIDs {
			ids[id] = true
		}
		for id := range revoked {
			ids[id] = true
		}
		s.RevokedKeyIDs = sortedSet(ids)
		s.ServerKeysFetchedAt = formatTime(c.opts.Now())
	})
}

// ---- offline ---------------------------------------------------------------------------------------------------

const day = 24 * time.Hour

// Check is the offline decision from the stored state; it never goes online.
func (c *Client) Check() CheckResult {
	kind, state := c.store.load()
	switch kind {
	case stateCorrupt:
		return refuse("STATE_CORRUPT", "the state file is unreadable; activate again", nil)
	case stateTampered:
		return refuse("STATE_TAMPERED", "the state file was changed outside the client", nil)
	}
	fingerprint, err := c.Fingerprint()
	if err != nil {
		return refuse("FINGERPRINT_MISMATCH", err.Error(), nil)
	}
	now := c.opts.Now()
	source, license, err := c.storedLicense(state)
	var verification *VerificationError
	if errors.As(err, &verification) {
		return refuse(verification.Reason, verification.Message, nil)
	}
	if license == nil {
		return refuse("NO_LICENSE", "no licence is stored on this machine", nil)
	}
	if license.MachineFingerprint != fingerprint {
		return refuse("FINGERPRINT_MISMATCH", "the licence was issued to another machine", license)
	}
	if c.opts.Product != "" && license.Product != c.opts.Product {
		return refuse("PRODUCT_MISMATCH", "the licence is for product "+license.Product, license)
	}
	latest := maxTime(signedTimeOf(license), parseTime(state.LatestSignedAt))
	if latest != nil && now.Before(latest.Add(-c.opts.ClockTolerance)) {
		return refuse("CLOCK_TAMPERED", "the local clock is earlier than a time the server signed ("+formatTime(*latest)+")", license)
	}
	if v := state.LastValidation; v != nil && !v.Valid {
		checked, signed := parseTime(v.CheckedAt), signedTimeOf(license)
		if checked != nil && (signed == nil || !checked.Before(*signed)) {
			code := v.Status
			if v.Code != nil {
				code = *v.Code
			}
			return refuse("INVALIDATED", fmt.Sprintf("the server answered %s at %s", code, v.CheckedAt), license)
		}
	}
	if license.Policy != nil && license.Policy.HeartbeatTimeoutSeconds != nil {
		seen := maxTime(parseTime(state.SeatSeenAt), parseTime(license.ActivatedAt))
		if lost := state.SeatLost; lost != nil {
			at := parseTime(lost.At)
			if at != nil && (seen == nil || !at.Before(*seen)) {
				return refuse("SEAT_LOST", "the server answered "+lost.Code+" to a heartbeat: the seat was released", license)
			}
		}
		timeout := time.Duration(*license.Policy.HeartbeatTimeoutSeconds) * time.Second
		if seen == nil || now.Sub(*seen) > timeout {
			return refuse("HEARTBEAT_OVERDUE", fmt.Sprintf("no successful heartbeat for more than %s", timeout), license)
		}
	}
	fileExpiresAt := parseTime(license.FileExpiresAt)
	if source == "license_file" && (fileExpiresAt == nil || now.After(*fileExpiresAt)) {
		return refuse("FILE_EXPIRED", "the licence file expired at "+license.FileExpiresAt+"; fetch a new one", license)
	}
	if c.opts.MaxOfflineDays > 0 && (latest == nil || now.Sub(*latest) > time.Duration(c.opts.MaxOfflineDays)*day) {
		return refuse("OFFLINE_TOO_LONG", fmt.Sprintf("no signed answer for more than %d days", c.opts.MaxOfflineDays), license)
	}
	result := CheckResult{OK: true, Status: "active", License: license, Source: source, FileExpiresAt: fileExpiresAt}
	if license.ExpiresAt != nil {
		expires := parseTime(*license.ExpiresAt)
		if expires == nil {
			return refuse("MALFORMED_PAYLOAD", "expires_at is not a time", license)
		}
		graceEnds := expires.Add(time.Duration(license.GraceDays) * day)
		if now.After(graceEnds) {
			return refuse("EXPIRED", "the licence expired at "+*license.ExpiresAt, license)
		}
		if now.After(*expires) {
			result.Status = "grace"
		}
		result.ExpiresAt, result.GraceEndsAt = expires, &graceEnds
	}
	return result
}

func refuse(reason, message string, license *License) CheckResult {
	return CheckResult{Reason: reason, Message: message, License: license}
}

// ---- verification ----------------------------------------------------------------------------------------------

func (c *Client) trusted(state *clientState) map[string]*PublicKey {
	if c.opts.PinToShippedKeys {
		return trustedKeys(c.opts.PublicKeys, nil, nil, revokedSet(state))
	}
	published, _ := parseEntries(state.ServerKeys)
	return trustedKeys(c.opts.PublicKeys, c.opts.RootKeys, published, revokedSet(state))
}

func revokedSet(state *clientState) map[string]bool {
	set := map[string]bool{}
	for _, id := range state.RevokedKeyIDs {
		set[id] = true
	}
	return set
}

func (c *Client) open(envelope json.RawMessage, state *clientState) ([]byte, error) {
	return openEnvelope(envelope, c.trusted(state), revokedSet(state))
}

// openSignedLicense: `{license?, signature?, envelope}`; the licence is the payload, `license` must equal it.
func (c *Client) openSignedLicense(raw json.RawMessage, state *clientState) (*License, error) {
	var document map[string]json.RawMessage
	if json.Unmarshal(raw, &document) != nil || document == nil {
		return nil, verr("MALFORMED_ENVELOPE", "not a signed licence")
	}
	envelope, present := document["envelope"]
	if !present {
		return nil, verr("UNSUPPORTED_FORMAT", "no envelope: a version 1 licence, which this client does not accept")
	}
	payload, err := c.open(envelope, state)
	if err != nil {
		return nil, err
	}
	if given, present := document["license"]; present && !sameJSON(given, payload) {
		return nil, verr("PAYLOAD_MISMATCH", "the licence beside the envelope differs from the signed payload")
	}
	var license License
	if json.Unmarshal(payload, &license) != nil || decodeNumbers(payload, &license.Raw) != nil {
		return nil, verr("MALFORMED_PAYLOAD", "the payload is not a licence")
	}
	return &license, nil
}

func (c *Client) openLicenseFile(text string, state *clientState) (*License, error) {
	document := dearmor("LICENSE FILE", text)
	if document == nil {
		return nil, verr("MALFORMED_ENVELOPE", "not a licence file")
	}
	return c.openSignedLicense(document, state)
}

// stateFor returns the state after fetching the server's keys once, when the envelope names a key not yet trusted.
func (c *Client) stateFor(ctx context.Context, envelope json.RawMessage) *clientState {
	_, state := c.store.load()
	var named struct {
		KeyID string `json:"key_id"`
	}
	if json.Unmarshal(envelope, &named) == nil && named.KeyID != "" && c.trusted(state)[named.KeyID] == nil && !revokedSet(state)[named.KeyID] {
		if _, err := c.RefreshKeys(ctx); err == nil {
			_, state = c.store.load()
		}
	}
	return state
}

// VerifyAnswer checks a signed answer (validate, usage): its envelope verifies, it echoes the nonce and names this
// licence and machine. It returns the payload.
func (c *Client) VerifyAnswer(ctx context.Context, answer []byte, nonce, licenseKey string) ([]byte, error) {
	var document map[string]json.RawMessage
	if json.Unmarshal(answer, &document) != nil || document == nil {
		return nil, verr("MALFORMED_ENVELOPE", "the answer is not a JSON object")
	}
	envelope, present := document["envelope"]
	if !present {
		return nil, verr("UNSUPPORTED_FORMAT", "the answer carries no envelope")
	}
	payload, err := c.open(envelope, c.stateFor(ctx, envelope))
	if err != nil {
		return nil, err
	}
	var subject struct {
		Nonce              string `json:"nonce"`
		LicenseKey         string `json:"license_key"`
		MachineFingerprint string `json:"machine_fingerprint"`
	}
	_ = json.Unmarshal(payload, &subject)
	fingerprint, err := c.Fingerprint()
	if err != nil {
		return nil, err
	}
	if subject.Nonce != nonce {
		return nil, verr("NONCE_MISMATCH", "the answer is not for this request (replayed?)")
	}
	if subject.LicenseKey != licenseKey || subject.MachineFingerprint != fingerprint {
		return nil, verr("WRONG_SUBJECT", "the answer is about another licence or machine")
	}
	return payload, nil
}

// StoreActivation verifies an activation answer and stores it (what Activate does with the server's answer).
func (c *Client) StoreActivation(ctx context.Context, answer []byte) (*License, error) {
	var document map[string]json.RawMessage
	if json.Unmarshal(answer, &document) != nil || document == nil {
		return nil, verr("MALFORMED_ENVELOPE", "the activation answer is not a JSON object")
	}
	envelope, present := document["envelope"]
	if !present {
		return nil, verr("UNSUPPORTED_FORMAT", "the activation answer carries no envelope")
	}
	license, err := c.openSignedLicense(answer, c.stateFor(ctx, envelope))
	if err != nil {
		return nil, err
	}
	stored, _ := json.Marshal(map[string]json.RawMessage{"envelope": envelope})
	now := c.opts.Now()
	return license, c.update(func(s *clientState) {
		s.Activation, s.LicenseFile, s.LastValidation, s.SeatLost = stored, nil, nil, nil
		s.SeatSeenAt = formatTime(now)
		s.LatestSignedAt = later(s.LatestSignedAt, signedTimeOf(license))
	})
}

func (c *Client) storeLicenseFile(ctx context.Context, text string) error {
	document := dearmor("LICENSE FILE", text)
	if document == nil {
		return verr("MALFORMED_ENVELOPE", "not a licence file")
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(document, &members)
	var state *clientState
	if envelope, present := members["envelope"]; present {
		state = c.stateFor(ctx, envelope)
	} else {
		_, state = c.store.load()
	}
	license, err := c.openSignedLicense(document, state)
	if err != nil {
		return err
	}
	fingerprint, err := c.Fingerprint()
	if err != nil {
		return err
	}
	if license.MachineFingerprint != fingerprint {
		return verr("FINGERPRINT_MISMATCH", "the licence file was issued to another machine")
	}
	return c.update(func(s *clientState) {
		s.LicenseFile = &text
		s.LastValidation = nil
		s.LatestSignedAt = later(s.LatestSignedAt, signedTimeOf(license))
	})
}

// ---- plumbing --------------------------------------------------------------------------------------------------

func (c *Client) refreshKeysIfDue(ctx context.Context) {
	_, state := c.store.load()
	fetched := parseTime(state.ServerKeysFetchedAt)
	now := c.opts.Now()
	if fetched != nil && !now.Before(*fetched) && now.Before(fetched.Add(c.opts.KeyRefreshInterval)) {
		return
	}
	_, _ = c.RefreshKeys(ctx) // a failed refresh keeps the stored key list
}

// storedLicense verifies the stored licence file, else the stored activation; a nil licence when neither is stored.
func (c *Client) storedLicense(state *clientState) (string, *License, error) {
	switch {
	case state.LicenseFile != nil:
		license, err := c.openLicenseFile(*state.LicenseFile, state)
		return "license_file", license, err
	case state.Activation != nil:
		license, err := c.openSignedLicense(state.Activation, state)
		return "activation", license, err
	}
	return "", nil, nil
}

func (c *Client) seatBody() (map[string]interface{}, error) {
	_, state := c.store.load()
	_, license, err := c.storedLicense(state)
	if license == nil || err != nil {
		return nil, &ServerError{Code: "NOT_ACTIVATED", Status: 400, Message: "this machine has no stored licence; activate first"}
	}
	fingerprint, err := c.Fingerprint()
	if err != nil {
		return nil, err
	}
	return map[string]interface{}{"license_key": license.LicenseKey, "machine_fingerprint": fingerprint}, nil
}

func (c *Client) activationBody(licenseKey string, machine MachineInfo) (map[string]interface{}, error) {
	body, err := c.machineBody(machine)
	if err != nil {
		return nil, err
	}
	body["license_key"] = licenseKey
	if c.opts.Product != "" {
		body["product"] = c.opts.Product
	}
	return body, nil
}

// machineBody is what activation and trials send about this machine.
func (c *Client) machineBody(machine MachineInfo) (map[string]interface{}, error) {
	fingerprint, err := c.Fingerprint()
	if err != nil {
		return nil, err
	}
	if machine.Hostname == "" {
		machine.Hostname, _ = os.Hostname()
	}
	if machine.OS == "" {
		machine.OS = runtime.GOOS + " " + runtime.GOARCH
	}
	// envelope: true asks for the signed envelope (docs/signing.md, Envelopes): this client verifies nothing else.
	body := map[string]interface{}{"machine_fingerprint": fingerprint, "hostname": machine.Hostname, "os": machine.OS, "envelope": true}
	if machine.AppVersion != "" {
		body["app_version"] = machine.AppVersion
	}
	return body, nil
}

func (c *Client) update(change func(*clientState)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	kind, state := c.store.load()
	if kind != stateOK {
		state = &clientState{Version: 1}
	}
	change(state)
	return c.store.save(state)
}

func (c *Client) endpoint(baseURL, path string) (string, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return "", &NetworkError{Message: "base URL: " + err.Error(), Err: err}
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	base.RawQuery, base.Fragment, base.RawPath = "", "", ""
	return base.ResolveReference(&url.URL{Path: strings.TrimLeft(path, "/")}).String(), nil
}

var retryableStatus = map[int]bool{429: true, 502: true, 503: true, 504: true}

func (c *Client) request(ctx context.Context, method, path string, body interface{}, idempotent bool) ([]byte, error) {
	return c.requestAt(ctx, c.opts.ServerURL, method, path, body, idempotent)
}

// requestAt is request against another base URL (a relay's).
func (c *Client) requestAt(ctx context.Context, baseURL, method, path string, body interface{}, idempotent bool) ([]byte, error) {
	attempts := 1
	if idempotent {
		attempts += c.opts.Retries
	}
	for attempt := 1; ; attempt++ {
		answer, err := c.requestOnce(ctx, baseURL, method, path, body)
		if err == nil {
			return answer, nil
		}
		var serverErr *ServerError
		var networkErr *NetworkError
		retryable := errors.As(err, &networkErr) || (errors.As(err, &serverErr) && retryableStatus[serverErr.Status])
		if !retryable || attempt >= attempts || ctx.Err() != nil {
			return nil, err
		}
		pause := 500 * time.Millisecond << (attempt - 1)
		if serverErr != nil {
			if seconds, ok := serverErr.Details["retry_after_seconds"].(float64); ok {
				pause = time.Duration(math.Min(seconds, 30) * float64(time.Second))
			}
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(float64(pause) * (0.8 + mathrand.Float64()*0.4))):
		}
	}
}

func (c *Client) requestOnce(ctx context.Context, baseURL, method, path string, body interface{}) ([]byte, error) {
	target, err := c.endpoint(baseURL, path)
	if err != nil {
		return nil, err
	}
	var reader io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		reader = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	request, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return nil, &NetworkError{Message: method + " " + path + ": " + err.Error(), Err: err}
	}
	request.Header.Set("accept", "application/json")
	if body != nil {
		request.Header.Set("content-type", "application/json")
	}
	response, err := c.opts.HTTPClient.Do(request)
	if err != nil {
		return nil, &NetworkError{Message: method + " " + path + ": " + err.Error(), Err: err}
	}
	defer response.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(response.Body, 4<<20))
	if err != nil || !json.Valid(raw) {
		return nil, &NetworkError{Message: fmt.Sprintf("%s %s: answer %d is not JSON", method, path, response.StatusCode), Err: err}
	}
	if response.StatusCode >= 200 && response.StatusCode < 300 {
		return raw, nil
	}
	var failure struct {
		Error *struct {
			Code    string                 `json:"code"`
			Message string                 `json:"message"`
			Details map[string]interface{} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &failure) != nil || failure.Error == nil || failure.Error.Code == "" {
		return nil, &NetworkError{Message: fmt.Sprintf("%s %s: answer %d without an error body", method, path, response.StatusCode)}
	}
	details := failure.Error.Details
	if details == nil {
		details = map[string]interface{}{}
	}
	if header := response.Header.Get("retry-after"); header != "" {
		if _, present := details["retry_after_seconds"]; !present {
			if seconds, err := strconv.ParseFloat(header, 64); err == nil {
				details["retry_after_seconds"] = seconds
			}
		}
	}
	return nil, &ServerError{Code: failure.Error.Code, Status: response.StatusCode, Message: failure.Error.Message, Details: details}
}

// ---- small helpers ---------------------------------------------------------------------------------------------

var base64Pattern = regexp.MustCompile(`^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`)

func armor(label string, raw []byte) string {
	text := base64.StdEncoding.EncodeToString(raw)
	lines := []string{"-----BEGIN " + label + "-----"}
	for len(text) > 64 {
		lines, text = append(lines, text[:64]), text[64:]
	}
	lines = append(lines, text, "-----END "+label+"-----", "")
	return strings.Join(lines, "\n")
}

// dearmor returns the JSON inside an armor, or nil when any part is wrong.
func dearmor(label, text string) json.RawMessage {
	if len(text) > 256*1024 {
		return nil
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimPrefix(text, "\ufeff"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) < 3 || lines[0] != "-----BEGIN "+label+"-----" || lines[len(lines)-1] != "-----END "+label+"-----" {
		return nil
	}
	body := strings.Join(lines[1:len(lines)-1], "")
	if !base64Pattern.MatchString(body) {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil || !json.Valid(raw) {
		return nil
	}
	return raw
}

func randomToken() string {
	raw := make([]byte, 24)
	_, _ = rand.Read(raw)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func withMembers(base map[string]interface{}, extra map[string]interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func parseTime(text string) *time.Time {
	if text == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return nil
	}
	return &t
}

func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func maxTime(times ...*time.Time) *time.Time {
	var best *time.Time
	for _, t := range times {
		if t != nil && (best == nil || t.After(*best)) {
			best = t
		}
	}
	return best
}

func later(stored string, candidate *time.Time) string {
	if best := maxTime(parseTime(stored), candidate); best != nil {
		return formatTime(*best)
	}
	return stored
}

func signedTimeOf(license *License) *time.Time {
	return maxTime(parseTime(license.SignedAt), parseTime(license.FileIssuedAt), parseTime(license.ActivatedAt))
}

func sortedSet(set map[string]bool) []string {
	m := map[string]*PublicKey{}
	for id := range set {
		m[id] = nil
	}
	return sortedKeys(m)
}
