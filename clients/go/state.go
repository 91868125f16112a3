package licenceclient

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// clientState is everything the client remembers between runs, in one file (docs/clients.md, Behaviour worth knowing).
type clientState struct {
	Version             int               `json:"version"`
	Activation          json.RawMessage   `json:"activation,omitempty"`
	LicenseFile         *string           `json:"license_file,omitempty"`
	LatestSignedAt      string            `json:"latest_signed_at,omitempty"`
	LastValidation      *lastValidation   `json:"last_validation,omitempty"`
	ServerKeys          []json.RawMessage `json:"server_keys,omitempty"`
	ServerKeysFetchedAt string            `json:"server_keys_fetched_at,omitempty"`
	RevokedKeyIDs       []string          `json:"revoked_key_ids,omitempty"`
	SeatSeenAt          string            `json:"seat_seen_at,omitempty"`
	SeatLost            *seatLost         `json:"seat_lost,omitempty"`
}

type lastValidation struct {
	Valid     bool    `json:"valid"`
	Status    string  `json:"status"`
	Code      *string `json:"code"`
	CheckedAt string  `json:"checked_at"`
}

type seatLost struct {
	Code string `json:"code"`
	At   string `json:"at"`
}

type loadKind int

const (
	stateOK loadKind = iota
	stateMissing
	stateCorrupt
	stateTampered
)

// stateFile is JSON with an HMAC over the exact bytes of its state, written atomically (temporary file, fsync,
// rename, fsync of the folder), so a crash leaves the old or the new file, never half of one.
type stateFile struct {
	path   string
	macKey []byte
}

func newStateFile(path, appSalt string) *stateFile {
	sum := sha256.Sum256([]byte("licence-client-state\x00" + appSalt))
	return &stateFile{path: path, macKey: sum[:]}
}

func (s *stateFile) mac(state []byte) string {
	m := hmac.New(sha256.New, s.macKey)
	m.Write(state)
	return hex.EncodeToString(m.Sum(nil))
}

func (s *stateFile) load() (loadKind, *clientState) {
	empty := &clientState{Version: 1}
	text, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return stateMissing, empty
	}
	if err != nil {
		return stateCorrupt, empty
	}
	var document struct {
		State json.RawMessage `json:"state"`
		Mac   string          `json:"mac"`
	}
	if json.Unmarshal(text, &document) != nil || len(document.State) == 0 || document.Mac == "" {
		return stateCorrupt, empty
	}
	var state clientState
	if json.Unmarshal(document.State, &state) != nil || state.Version != 1 {
		return stateCorrupt, empty
	}
	if !hmac.Equal([]byte(document.Mac), []byte(s.mac(document.State))) {
		return stateTampered, empty
	}
	return stateOK, &state
}

// prepare creates the state file's folder (and missing parents) with mode 0700 and checks that this process can
// write there; a *StateError otherwise (docs/clients.md, The state file).
func (s *stateFile) prepare() error {
	folder := filepath.Dir(s.path)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return stateErr(s.path, "the state file's folder "+folder+" cannot be created", err)
	}
	probe, err := os.CreateTemp(folder, ".probe-*")
	if err != nil {
		return stateErr(s.path, "the state file's folder "+folder+" cannot be written", err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

func (s *stateFile) save(state *clientState) error {
	if err := s.write(state); err != nil {
		return stateErr(s.path, "cannot write the state file "+s.path, err)
	}
	return nil
}

func (s *stateFile) write(state *clientState) error {
	body, err := json.Marshal(state)
	if err != nil {
		return err
	}
	text, _ := json.Marshal(struct {
		State json.RawMessage `json:"state"`
		Mac   string          `json:"mac"`
	}{body, s.mac(body)})
	folder := filepath.Dir(s.path)
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	temporary := filepath.Join(folder, "."+hex.EncodeToString(suffix)+".tmp")
	file, err := os.OpenFile(temporary, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = file.Write(append(text, '\n'))
	if err == nil {
		err = file.Sync()
	}
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(temporary, s.path)
	}
	if err != nil {
		os.Remove(temporary)
		return err
	}
	if dir, err := os.Open(folder); err == nil {
		_ = dir.Sync() // Windows cannot sync a folder; the rename is still atomic there
		dir.Close()
	}
	return nil
}
