package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a parsed schedule: a fixed interval ("@every 30s") or a cron
// expression. The configuration is validated with ParseSchedule and the
// daemon runs what ParseSchedule returns, so a schedule passes `config
// check` exactly when the daemon can run it.
type Schedule struct {
	// Interval is the time between two firings of an "@every" schedule; 0
	// for a cron expression.
	Interval time.Duration
	cron     cron.Schedule
}

// Next is the first firing after after (the zero time when a cron
// expression never fires again).
func (s Schedule) Next(after time.Time) time.Time {
	if s.Interval > 0 {
		return after.Add(s.Interval)
	}
	return s.cron.Next(after)
}

// cronParser reads the five-field expressions, descriptors (@hourly,
// @daily, ...) and CRON_TZ= prefixes that crontab users know.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule reads "@every DURATION" (any positive Go duration: cron's
// own @every would round it up to whole seconds) or a cron expression. The
// error quotes spec, says what is wrong and how to write one.
func ParseSchedule(spec string) (Schedule, error) {
	s, err := parseSchedule(strings.TrimSpace(spec))
	if err != nil {
		return Schedule{}, fmt.Errorf("%q is not a schedule (%w); use a cron expression like \"*/5 * * * *\" or \"@every 30s\"", spec, err)
	}
	return s, nil
}

func parseSchedule(spec string) (Schedule, error) {
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		rest = strings.TrimSpace(rest)
		d, err := time.ParseDuration(rest)
		switch {
		case err != nil:
			return Schedule{}, fmt.Errorf("%q is not a duration such as 30s or 5m", rest)
		case d <= 0:
			return Schedule{}, errors.New("the interval must be positive")
		}
		return Schedule{Interval: d}, nil
	}
	cs, err := cronParser.Parse(spec)
	if err != nil {
		return Schedule{}, err
	}
	return Schedule{cron: cs}, nil
}
