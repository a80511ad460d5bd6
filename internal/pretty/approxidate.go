package pretty

// --since/--until as git reads them (date.c approxidate_careful): first
// the strict parser for complete timestamps (seconds since the epoch,
// "@<seconds>", ISO and RFC 2822 dates with a time), then approxidate's
// forgiving reading, where every recognised word adjusts a broken-down
// local time that starts as now ("Nov 15 2023", "11/15/2023", "last
// friday", "noon yesterday", "2.weeks.ago", "1 month 2 days ago").

import (
	"strconv"
	"strings"
	"time"
)

// ParseDate reads a --since/--until value; ok is false when nothing in it
// was recognised (git then uses the current time; the tool refuses so a
// typo is not silently "now").
func ParseDate(s string, now time.Time) (time.Time, bool) {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseInt(strings.TrimPrefix(t, "@"), 10, 64); err == nil && n >= 100000000 {
		return time.Unix(n, 0), true
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05",
		"2006-01-02 15:04 -0700", "2006-01-02 15:04", "Mon Jan 2 15:04:05 2006 -0700", time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700"} {
		if v, err := time.ParseInLocation(layout, t, time.Local); err == nil {
			return v, true
		}
	}
	return approxidateStr(s, now)
}

// btm is a struct tm: month 0-11, year since 1900, -1 when unset.
type btm struct {
	year, mon, mday, hour, min, sec, wday int
}

func tmOf(t time.Time) btm {
	t = t.In(time.Local)
	return btm{year: t.Year() - 1900, mon: int(t.Month()) - 1, mday: t.Day(), hour: t.Hour(), min: t.Minute(), sec: t.Second(), wday: int(t.Weekday())}
}

func (tm btm) mktime() time.Time {
	return time.Date(tm.year+1900, time.Month(tm.mon+1), tm.mday, tm.hour, tm.min, tm.sec, 0, time.Local)
}

// updateTM is update_tm: unset date fields from now, then the time sec
// seconds earlier, read back into tm.
func updateTM(tm *btm, now btm, sec int64) time.Time {
	if tm.mday < 0 {
		tm.mday = now.mday
	}
	if tm.mon < 0 {
		tm.mon = now.mon
	}
	if tm.year < 0 {
		tm.year = now.year
		if tm.mon > now.mon {
			tm.year--
		}
	}
	n := tm.mktime().Add(-time.Duration(sec) * time.Second)
	*tm = tmOf(n)
	return n
}

func pendingNumber(tm *btm, num *int) {
	n := *num
	if n == 0 {
		return
	}
	*num = 0
	switch {
	case tm.mday < 0 && n < 32:
		tm.mday = n
	case tm.mon < 0 && n < 13:
		tm.mon = n - 1
	case tm.year < 0:
		switch {
		case n > 1969 && n < 2100:
			tm.year = n - 1900
		case n > 69 && n < 100:
			tm.year = n
		case n < 38:
			tm.year = 100 + n
		}
	}
}

// matchString is date.c's match_string: how many leading characters of
// date match str, ignoring case (0 when an alphanumeric differs).
func matchString(date, str string) int {
	i := 0
	for ; i < len(date); i++ {
		var s byte
		if i < len(str) {
			s = str[i]
		}
		d := date[i]
		if d == s || upper(d) == upper(s) {
			continue
		}
		if !isAlnum(d) {
			break
		}
		return 0
	}
	return i
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var weekdayNames = []string{"Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"}
var numberNames = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}

func approxidateStr(s string, nowT time.Time) (time.Time, bool) {
	now := tmOf(nowT)
	tm := now
	tm.year, tm.mon, tm.mday = -1, -1, -1
	number, touched := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			pendingNumber(&tm, &number)
			i += approxidateDigit(s[i:], &tm, &number, nowT)
			touched = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			i += approxidateAlpha(s[i:], &tm, now, &number, &touched)
		default:
			i++
		}
	}
	pendingNumber(&tm, &number)
	return updateTM(&tm, now, 0), touched
}

func approxidateDigit(s string, tm *btm, num *int, now time.Time) int {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	number, err := strconv.Atoi(s[:end])
	if err != nil {
		number = 0
	}
	if end+1 < len(s) && strings.IndexByte(":./-", s[end]) >= 0 && s[end+1] >= '0' && s[end+1] <= '9' {
		if m := matchMultiNumber(number, s[end], s, end, tm, now); m > 0 {
			return m
		}
	}
	// Zero-padding only for small numbers ("Dec 02", never "Dec 0002").
	if s[0] != '0' || end <= 2 {
		*num = number
	}
	return end
}

func atoiAt(s string, i int) (int, int) {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	v, _ := strconv.Atoi(s[i:j])
	return v, j
}

func matchMultiNumber(num int, c byte, s string, end int, tm *btm, now time.Time) int {
	num2, e := atoiAt(s, end+1)
	num3 := -1
	if e+1 < len(s) && s[e] == c && s[e+1] >= '0' && s[e+1] <= '9' {
		num3, e = atoiAt(s, e+1)
	}
	switch c {
	case ':':
		if num3 < 0 {
			num3 = 0
		}
		if num < 25 && num2 >= 0 && num2 < 60 && num3 >= 0 && num3 <= 60 {
			tm.hour, tm.min, tm.sec = num, num2, num3
			return e
		}
		return 0
	default:
		nowTM := btm{year: now.UTC().Year() - 1900}
		if num > 70 {
			if setDate(num, num2, num3, nil, now, tm) {
				return e
			}
			if setDate(num, num3, num2, nil, now, tm) {
				return e
			}
		}
		if c != '.' && setDate(num3, num, num2, &nowTM, now, tm) {
			return e
		}
		if setDate(num3, num2, num, &nowTM, now, tm) {
			return e
		}
		if c == '.' && setDate(num3, num, num2, &nowTM, now, tm) {
			return e
		}
		return 0
	}
}

// setDate is set_date; with nowTM a date more than ten days ahead is
// refused.
func setDate(year, month, day int, nowTM *btm, now time.Time, tm *btm) bool {
	if month <= 0 || month >= 13 || day <= 0 || day >= 32 {
		return false
	}
	check := *tm
	r := tm
	if nowTM != nil {
		r = &check
	}
	r.mon, r.mday = month-1, day
	switch {
	case year == -1:
		if nowTM == nil {
			return false
		}
		r.year = nowTM.year
	case year >= 1970 && year < 2100:
		r.year = year - 1900
	case year > 70 && year < 100:
		r.year = year
	case year < 38:
		r.year = year + 100
	default:
		return false
	}
	if nowTM == nil {
		return true
	}
	specified := time.Date(r.year+1900, time.Month(r.mon+1), r.mday, max(r.hour, 0), max(r.min, 0), max(r.sec, 0), 0, time.UTC)
	if now.Add(10 * 24 * time.Hour).Before(specified) {
		return false
	}
	tm.mon, tm.mday = r.mon, r.mday
	if year != -1 {
		tm.year = r.year
	}
	return true
}

func approxidateAlpha(s string, tm *btm, now btm, num *int, touched *bool) int {
	end := 1
	for end < len(s) && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z') {
		end++
	}
	for i, m := range monthNames {
		if matchString(s, m) >= 3 {
			tm.mon = i
			*touched = true
			return end
		}
	}
	dateTime := func(hour int) {
		if tm.hour < hour {
			updateTM(tm, now, 24*60*60)
		}
		tm.hour, tm.min, tm.sec = hour, 0, 0
	}
	ampm := func(pm bool) {
		hour, n := tm.hour, *num
		*num = 0
		if n != 0 {
			hour = n
			tm.min, tm.sec = 0, 0
		}
		tm.hour = hour % 12
		if pm {
			tm.hour += 12
		}
	}
	specials := []struct {
		name string
		fn   func()
	}{
		{"yesterday", func() { *num = 0; updateTM(tm, now, 24*60*60) }},
		{"noon", func() { pendingNumber(tm, num); dateTime(12) }},
		{"midnight", func() { pendingNumber(tm, num); dateTime(0) }},
		{"tea", func() { pendingNumber(tm, num); dateTime(17) }},
		{"PM", func() { ampm(true) }},
		{"AM", func() { ampm(false) }},
		{"never", func() { *tm = tmOf(time.Unix(0, 0)); *num = 0 }},
		{"now", func() { *num = 0; updateTM(tm, now, 0) }},
	}
	for _, sp := range specials {
		if matchString(s, sp.name) == len(sp.name) {
			sp.fn()
			*touched = true
			return end
		}
	}
	if *num == 0 {
		for i := 1; i < len(numberNames); i++ {
			if matchString(s, numberNames[i]) == len(numberNames[i]) {
				*num = i
				*touched = true
				return end
			}
		}
		if matchString(s, "last") == 4 {
			*num = 1
			*touched = true
		}
		return end
	}
	for _, tl := range []struct {
		name string
		sec  int64
	}{{"seconds", 1}, {"minutes", 60}, {"hours", 3600}, {"days", 86400}, {"weeks", 7 * 86400}} {
		if matchString(s, tl.name) >= len(tl.name)-1 {
			updateTM(tm, now, tl.sec*int64(*num))
			*num = 0
			*touched = true
			return end
		}
	}
	for i, w := range weekdayNames {
		if matchString(s, w) >= 3 {
			n := *num - 1
			*num = 0
			diff := tm.wday - i
			if diff <= 0 {
				n++
			}
			diff += 7 * n
			updateTM(tm, now, int64(diff)*24*60*60)
			*touched = true
			return end
		}
	}
	if matchString(s, "months") >= 5 {
		updateTM(tm, now, 0)
		n := tm.mon - *num
		*num = 0
		for n < 0 {
			n += 12
			tm.year--
		}
		tm.mon = n
		*touched = true
		return end
	}
	if matchString(s, "years") >= 4 {
		updateTM(tm, now, 0)
		tm.year -= *num
		*num = 0
		*touched = true
		return end
	}
	return end
}
