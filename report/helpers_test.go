package report_test

import (
	"io"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/report"
)

// readJSONL reads every event of r with a report.JSONLReader, as a user's loop would. It stops
// at the first line that is not an event and returns the events before it with its error.
func readJSONL(r io.Reader) ([]events.Event, error) {
	jr := report.NewJSONLReader(r)
	var out []events.Event
	for {
		e, err := jr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
}

// writeDir writes a report directory for events already in memory, as a crawl would: Create,
// Record of each event, Close.
func writeDir(dir string, evs []events.Event, found *report.Found, o report.Options) (*report.Report, error) {
	d, err := report.Create(dir, o)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		d.Record(e)
	}
	return d.Close(found)
}
