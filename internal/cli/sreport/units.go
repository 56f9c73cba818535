package sreport

import (
	"fmt"
	"strconv"
	"strings"
)

// units is -t: what a usage is printed in.
type units struct {
	// div turns CPU-seconds into the unit (1, 60, 3600); 0 with only a
	// percentage.
	div int64
	// percent adds (or, without div, is) the share of the total.
	percent bool
	name    string // "Minutes"
}

// parseUnits reads -t as sreport does: Seconds, Minutes, Hours, Percent
// or SecPer, MinPer, HourPer, abbreviated ("s", "m", "h", "p").
func parseUnits(s string) (units, error) {
	if s == "" {
		return units{div: 60, name: "Minutes"}, nil
	}
	l := strings.ToLower(s)
	match := func(full string, min int) bool {
		return len(l) >= min && strings.HasPrefix(strings.ToLower(full), l)
	}
	switch {
	case match("SecPer", 6):
		return units{div: 1, percent: true, name: "Seconds"}, nil
	case match("MinPer", 4):
		return units{div: 60, percent: true, name: "Minutes"}, nil
	case match("HourPer", 6):
		return units{div: 3600, percent: true, name: "Hours"}, nil
	case match("Seconds", 1):
		return units{div: 1, name: "Seconds"}, nil
	case match("Minutes", 1):
		return units{div: 60, name: "Minutes"}, nil
	case match("Hours", 1):
		return units{div: 3600, name: "Hours"}, nil
	case match("Percent", 1):
		return units{percent: true}, nil
	}
	return units{}, fmt.Errorf("unknown time format %s", s)
}

// title is the banner's unit line's end ("CPU Minutes",
// "Percentage of Total", "CPU Minutes/Percentage of Total").
func (u units) title(prefix string) string {
	switch {
	case u.div == 0:
		return "Percentage of Total"
	case u.percent:
		return prefix + u.name + "/Percentage of Total"
	}
	return prefix + u.name
}

// format prints CPU-seconds in the unit, with its share of total.
func (u units) format(secs, total float64) string {
	pct := 0.0
	if total > 0 {
		pct = secs / total * 100
	}
	if u.div == 0 {
		return fmt.Sprintf("%.2f%%", pct)
	}
	v := strconv.FormatInt(int64(secs)/u.div, 10)
	if u.percent {
		return fmt.Sprintf("%s(%.2f%%)", v, pct)
	}
	return v
}

// width is a usage column's width: wider for value and percentage.
func (u units) width(def int) int {
	if u.div != 0 && u.percent {
		return 20
	}
	return def
}
