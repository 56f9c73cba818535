package sim

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Column is one schedule in the report: a simulated policy (with its run)
// or the site's own logged schedule (Run nil).
type Column struct {
	Name    string
	Metrics Metrics
	Run     *Result
}

// Report writes the comparison table.
func Report(w io.Writer, header []string, cols []Column) error {
	for _, h := range header {
		if _, err := fmt.Fprintln(w, h); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, cell func(c Column) string) {
		fmt.Fprintf(tw, "%s\t", label)
		for _, c := range cols {
			fmt.Fprintf(tw, "%s\t", cell(c))
		}
		fmt.Fprintln(tw)
	}
	row("", func(c Column) string { return c.Name })
	row("jobs", func(c Column) string { return Thousands(c.Metrics.Jobs) })
	row("utilization", func(c Column) string { return fmt.Sprintf("%.1f %%", 100*c.Metrics.Utilization) })
	row("mean wait", func(c Column) string { return duration(c.Metrics.MeanWait) })
	row("p95 wait", func(c Column) string { return duration(c.Metrics.P95Wait) })
	row("mean bounded slowdown", func(c Column) string { return fmt.Sprintf("%.2f", c.Metrics.MeanBoundedSlowdown) })
	row("makespan", func(c Column) string { return duration(c.Metrics.Makespan) })
	row("scheduling cycles", func(c Column) string {
		if c.Run == nil {
			return "-"
		}
		return Thousands(c.Run.Cycles)
	})
	row("simulated in", func(c Column) string {
		if c.Run == nil {
			return "-"
		}
		if c.Run.Wall < time.Second {
			return c.Run.Wall.Round(time.Microsecond).String()
		}
		return c.Run.Wall.Round(time.Millisecond).String()
	})
	row("jobs per second", func(c Column) string {
		if c.Run == nil || c.Run.Wall <= 0 {
			return "-"
		}
		return Thousands(int(float64(len(c.Run.Outcomes)) / c.Run.Wall.Seconds()))
	})
	return tw.Flush()
}

// duration prints seconds as the largest unit that keeps it readable.
func duration(sec float64) string {
	switch {
	case sec >= 2*86400:
		return fmt.Sprintf("%.1f d", sec/86400)
	case sec >= 2*3600:
		return fmt.Sprintf("%.1f h", sec/3600)
	case sec >= 120:
		return fmt.Sprintf("%.1f min", sec/60)
	}
	return fmt.Sprintf("%.0f s", sec)
}

// Thousands groups digits by three (77,222).
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
