package workflows

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("10m", "1h30m"); a bare number is taken as seconds, so a person
// typing JSON in the Web UI can write either.
type Duration time.Duration

// Forever is the Duration "forever" reads as: a wait with no timer.
const Forever = Duration(-1)

// MarshalJSON writes the duration as a string; a negative one is
// "forever".
func (d Duration) MarshalJSON() ([]byte, error) {
	if d < 0 {
		return json.Marshal("forever")
	}
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "90s", "10m", 90 (seconds) or "forever".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s == "" {
			*d = 0
			return nil
		}
		if strings.EqualFold(strings.TrimSpace(s), "forever") {
			*d = Forever
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			if n, err2 := strconv.ParseFloat(s, 64); err2 == nil {
				*d = Duration(n * float64(time.Second))
				return nil
			}
			return fmt.Errorf("duration %q: want a Go duration like \"10m\", a number of seconds or \"forever\": %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration must be a string like \"10m\" or a number of seconds, got %s", b)
	}
	*d = Duration(n * float64(time.Second))
	return nil
}
