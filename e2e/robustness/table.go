package robustness

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// Row is what one scenario measured.
type Row struct {
	Scenario string
	// Traffic is how long the traffic ran.
	Traffic time.Duration
	Report  Report
	// Restarts are the member restarts the scenario caused: containers restarted and pods
	// made again, counted on the members' pods.
	Restarts int
	// Replacements are the members the scenario replaced: IDs the cluster listed when the
	// traffic started that it no longer lists at its end.
	Replacements int
}

// Table lays rows out as a text table, one scenario a line.
func Table(rows []Row) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintln(w, "scenario\ttraffic\tissued\tacknowledged\tfailed\tunknown\tlost\tlinearizable\t"+
		"longest without a write\tmember restarts\treplacements\t")
	for _, r := range rows {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t\n", r.Scenario, r.Traffic.Round(time.Second),
			r.Report.Issued, r.Report.Acknowledged, r.Report.Failed, r.Report.Unknown, len(r.Report.Lost),
			r.Report.Linearizable, r.Report.LongestWriteGap.Round(time.Millisecond), r.Restarts, r.Replacements)
	}
	_ = w.Flush()
	return b.String()
}

func (r Row) String() string {
	return fmt.Sprintf("%s, traffic for %s: %s; member restarts: %d; replacements: %d",
		r.Scenario, r.Traffic.Round(time.Second), r.Report, r.Restarts, r.Replacements)
}
