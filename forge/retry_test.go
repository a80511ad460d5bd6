package forge

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestHostWaitReadsEachHostsHeader(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	p := &Policy{now: func() time.Time { return now }}
	for _, c := range []struct {
		name   string
		header http.Header
		wait   time.Duration
		told   bool
	}{
		{"Retry-After seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"Retry-After zero", http.Header{"Retry-After": {"0"}}, 0, true},
		{"Retry-After date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second, true},
		{"Retry-After date passed", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0, true},
		{"GitHub reset epoch", http.Header{"X-Ratelimit-Reset": {strconv.FormatInt(now.Add(30*time.Second).Unix(), 10)}}, 31 * time.Second, true},
		{"GitLab reset epoch", http.Header{"Ratelimit-Reset": {strconv.FormatInt(now.Add(10*time.Second).Unix(), 10)}}, 11 * time.Second, true},
		{"reset in seconds", http.Header{"Ratelimit-Reset": {"5"}}, 5 * time.Second, true},
		{"nothing said", http.Header{}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
	} {
		wait, told := p.hostWait(c.header)
		if wait != c.wait || told != c.told {
			t.Errorf("%s: %v %v, want %v %v", c.name, wait, told, c.wait, c.told)
		}
	}
}

func TestJudgeRetriesOnlyWhatCanPass(t *testing.T) {
	p := &Policy{now: time.Now}
	for _, c := range []struct {
		status int
		header http.Header
		retry  bool
	}{
		{429, nil, true}, {500, nil, true}, {502, nil, true}, {503, nil, true}, {504, nil, true},
		{501, nil, false}, {400, nil, false}, {401, nil, false}, {404, nil, false}, {409, nil, false}, {422, nil, false},
		{403, nil, false}, // a scope or permission refusal
		{403, http.Header{"X-Ratelimit-Remaining": {"0"}}, true},
		{403, http.Header{"Retry-After": {"60"}}, true},
	} {
		h := c.header
		if h == nil {
			h = http.Header{}
		}
		if _, retry := p.judge(&http.Response{StatusCode: c.status, Header: h}, errors.New("x")); retry != c.retry {
			t.Errorf("%d %v: retry %v, want %v", c.status, c.header, retry, c.retry)
		}
	}
	if _, retry := p.judge(nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")); !retry {
		t.Error("a refused connection is not retried")
	}
	if _, retry := p.judge(nil, errors.New("unsupported protocol scheme")); retry {
		t.Error("a request that cannot be sent is retried")
	}
}
