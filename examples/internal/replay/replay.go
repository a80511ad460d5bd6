// Package replay serves a recorded model-API exchange on a local httptest
// server, so the SDK examples (examples/anthropic, examples/openai) run
// their agent loop with the real SDK, the real kernel and no network.
//
// A recording is a list of steps, one per request the agent loop makes.
// Each request is first checked the way the real API checks it (the
// API-specific Check: authentication header, required fields, tool
// definitions, every tool call answered by a result with its id), and a
// request the real API would refuse gets the real API's 400 error body.
// The step then names what the kernel's tool results in that request must
// contain (an exec_tool's answer, say): a loop that stopped running tools
// through the kernel fails there. The step's recorded response is sent back
// as the API sent it.
package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Step is one recorded request/response pair.
type Step struct {
	// Note says what this turn is (for a reader of the recording).
	Note string `json:"note,omitempty"`
	// ResultsContain are substrings that the text of the tool results
	// sent in this request must contain, all of them.
	ResultsContain []string `json:"results_contain,omitempty"`
	// Response is the API's response body, sent with status 200.
	Response json.RawMessage `json:"response"`
}

// API checks requests the way one model API does.
type API struct {
	// Path is the request path the SDK posts to (/v1/messages).
	Path string
	// Check validates an authenticated request's body as the real API
	// does, returning the text of the tool results it carries (this
	// turn's), or an error the real API would answer with 400.
	Check func(r *http.Request, body []byte) (results []string, err error)
	// Authorized reports whether the request carries credentials.
	Authorized func(r *http.Request) bool
	// ErrorBody renders an error in the API's shape.
	ErrorBody func(kind, message string) []byte
}

// Server replays one recording.
type Server struct {
	*httptest.Server
	api   API
	steps []Step
	mu    sync.Mutex
	next  int
	errs  []error
}

// Load decodes a recording.
func Load(raw []byte) ([]Step, error) {
	var steps []Step
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, fmt.Errorf("replay: recording: %w", err)
	}
	if len(steps) == 0 {
		return nil, errors.New("replay: recording has no steps")
	}
	return steps, nil
}

// Start serves steps on a loopback httptest server.
func Start(api API, steps []Step) *Server {
	s := &Server{api: api, steps: steps}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *Server) fail(w http.ResponseWriter, status int, kind, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Errorf("replay: request %d: %s", s.next+1, msg))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(s.api.ErrorBody(kind, msg))
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != s.api.Path {
		s.fail(w, http.StatusNotFound, "not_found_error", "%s %s: not found", r.Method, r.URL.Path)
		return
	}
	if !s.api.Authorized(r) {
		s.fail(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key / Authorization")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "reading body: %v", err)
		return
	}
	results, err := s.api.Check(r, body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "%v", err)
		return
	}
	s.mu.Lock()
	i := s.next
	s.mu.Unlock()
	if i >= len(s.steps) {
		s.fail(w, http.StatusInternalServerError, "api_error", "the recording has %d responses; the loop asked for more", len(s.steps))
		return
	}
	all := strings.Join(results, "\n")
	for _, want := range s.steps[i].ResultsContain {
		if !strings.Contains(all, want) {
			s.fail(w, http.StatusInternalServerError, "api_error", "tool results %q lack %q (step %q)", all, want, s.steps[i].Note)
			return
		}
	}
	s.mu.Lock()
	s.next++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.steps[i].Response)
}

// Err reports every refused request, and a recording the loop did not
// play to its end.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := append([]error{}, s.errs...)
	if s.next != len(s.steps) {
		errs = append(errs, fmt.Errorf("replay: %d of %d recorded responses were asked for", s.next, len(s.steps)))
	}
	return errors.Join(errs...)
}
