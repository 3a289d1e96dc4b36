// This file decides how an origin's timeline is drawn: the rolling count of starts against the
// budget line, each start coloured by its outcome, waits as bars, pauses as shaded spans, and
// answers from the cache below.

package report

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// swatch is one colour of the plot and what it means, for the legend beside it.
type swatch struct {
	key, label string
	color      color.NRGBA
}

// outcomeColors colour the request starts; hitColor the answers from the cache; waitColors the
// wait bars; pauseColors the pauses. The dots' colours (Okabe and Ito's palette, with a grey)
// differ in lightness as well as hue, so readers with red-green colour blindness tell them apart
// too: see TestDotColoursAreDistinguishable.
var (
	outcomeColors = []swatch{
		{cacheMiss, "start: full answer (cache miss)", color.NRGBA{0, 114, 178, 255}},
		{cacheRevalidated, "start: 304, the cache's copy served", color.NRGBA{86, 180, 233, 255}},
		{outcomeUncached, "start: outside the cache", color.NRGBA{120, 120, 120, 255}},
		{outcomeRetried, "start: answered 429/5xx or failed (re-sent or given up)", color.NRGBA{213, 94, 0, 255}},
	}
	hitColor   = swatch{cacheFresh, "from the cache, no request", color.NRGBA{240, 228, 66, 255}}
	waitColors = []swatch{
		{"rate", "wait: the rate budget", color.NRGBA{117, 112, 179, 255}},
		{reasonRetryAfter, "wait: Retry-After", color.NRGBA{213, 94, 0, 255}},
		{"backoff", "wait: backoff", color.NRGBA{140, 86, 75, 255}},
		{"crawl-delay", "wait: Crawl-delay", color.NRGBA{0, 158, 115, 255}},
		{"concurrency", "wait: 2 in flight", color.NRGBA{204, 121, 167, 255}},
		{reasonRobots, "wait: robots.txt", color.NRGBA{230, 159, 0, 255}},
		{"latency", "wait: slow answers", color.NRGBA{60, 60, 60, 255}},
	}
	otherWait   = swatch{"", "wait: other", color.NRGBA{170, 170, 170, 255}}
	pauseColors = []swatch{
		{reasonRetryAfter, "pause: Retry-After", color.NRGBA{213, 94, 0, 50}},
		{"", "pause: backoff or give-up", color.NRGBA{140, 86, 75, 50}},
	}
	countColor  = color.NRGBA{0, 0, 0, 255}
	budgetColor = color.NRGBA{214, 39, 40, 255}
	hitRim      = color.NRGBA{140, 130, 0, 255} // a pale dot needs a rim on white
)

// outcomeSwatch is the colour of a start: an answer given up on is drawn as one re-sent.
func outcomeSwatch(outcome string) swatch {
	if outcome == outcomeFailed {
		outcome = outcomeRetried
	}
	return colorOf(outcomeColors, outcome, outcomeColors[2])
}

func colorOf(list []swatch, key string, otherwise swatch) swatch {
	if i := slices.IndexFunc(list, func(s swatch) bool { return s.key == key }); i >= 0 {
		return list[i]
	}
	return otherwise
}

// fontStack is the typeface of the page and of its plots: Liberation Sans, which gonum measures
// the plots' text with, then Arial, its metric twin, then the browser's sans-serif.
const fontStack = "'Liberation Sans', Arial, Helvetica, sans-serif"

// Plot geometry in data units below the count axis: each wait lane is laneStep high; the cache
// row sits under the lanes.
const (
	laneTop    = -0.45
	laneStep   = 0.3
	barHalf    = 0.1
	plotWidth  = 9 * vg.Inch
	plotHeight = 3.2 * vg.Inch
)

// svgTimeline draws o's timeline as an SVG element, with x in seconds since zero, and returns
// the legend entries it used.
func svgTimeline(o Origin, zero, end time.Time) (string, []swatch, error) {
	p, used, err := timelinePlot(o, zero, end)
	if err != nil {
		return "", nil, err
	}
	c := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", nil, err
	}
	svg := buf.String()
	// The XML prolog and comment belong to a file, not to an element inside HTML.
	if i := strings.Index(svg, "<svg"); i >= 0 {
		svg = svg[i:]
	}
	// gonum names the one family it measured the text with; where a browser lacks it, Arial
	// (of the same metrics) or the page's sans-serif stands in, as for the page's own text.
	svg = strings.ReplaceAll(svg, "font-family:Liberation Sans;", "font-family:"+fontStack+";")
	return svg, used, nil
}

// timelinePlot lays out o's timeline.
func timelinePlot(o Origin, zero, end time.Time) (*plot.Plot, []swatch, error) {
	t := o.timeline
	secs := func(at time.Time) float64 { return at.Sub(zero).Seconds() }
	p := plot.New()
	p.X.Label.Text = "seconds since the crawl began"
	p.Y.Label.Text = "starts in the last second"
	for _, f := range []*vg.Length{&p.X.Label.TextStyle.Font.Size, &p.Y.Label.TextStyle.Font.Size} {
		*f = 10
	}
	// The page's typeface, not gonum's default serif (see fontStack).
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Typeface, f.Variant = "Liberation", "Sans"
	}
	xMax := max(secs(end), 1)
	p.X.Min, p.X.Max = 0, xMax
	var used []swatch

	starts := slices.Clone(t.starts)
	slices.SortFunc(starts, func(a, b mark) int { return a.at.Compare(b.at) })
	counts := rollingCounts(starts)
	top := max(o.Budget, float64(slices.Max(append(counts, 0)))) + 1

	lanes := assignLanes(t.waits)
	nLanes := slices.Max(append(slices.Clone(lanes), -1)) + 1
	hitRow := laneTop - laneStep*float64(max(nLanes, 1))
	p.Y.Min, p.Y.Max = hitRow-laneStep, top

	// Pauses first, so everything else is drawn over them.
	for _, sw := range pauseColors {
		var rings []plotter.XYer
		for _, s := range t.pauses {
			if (s.reason == reasonRetryAfter) == (sw.key == reasonRetryAfter) {
				rings = append(rings, box(secs(s.from), min(secs(s.to), p.X.Max), p.Y.Min, p.Y.Max))
			}
		}
		if err := addPolygon(p, rings, sw.color); err != nil {
			return nil, nil, err
		}
		if len(rings) > 0 {
			used = append(used, sw)
		}
	}

	var waitSwatches []swatch
	for i, s := range t.waits {
		sw := colorOf(waitColors, s.reason, otherWait)
		y := laneTop - laneStep*float64(lanes[i])
		if err := addPolygon(p, []plotter.XYer{box(secs(s.from), secs(s.to), y-barHalf, y+barHalf)}, sw.color); err != nil {
			return nil, nil, err
		}
		if !slices.Contains(waitSwatches, sw) {
			waitSwatches = append(waitSwatches, sw)
		}
	}

	if len(starts) > 0 {
		line, err := plotter.NewLine(countSteps(starts, secs))
		if err != nil {
			return nil, nil, err
		}
		line.StepStyle = plotter.PostStep
		line.Color, line.Width = countColor, vg.Points(0.8)
		p.Add(line)
	}
	budget, err := plotter.NewLine(budgetSteps(o, secs, xMax))
	if err != nil {
		return nil, nil, err
	}
	budget.StepStyle = plotter.PostStep
	budget.Color, budget.Width, budget.Dashes = budgetColor, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(budget)

	for _, sw := range outcomeColors {
		var pts plotter.XYs
		for i, s := range starts {
			if outcomeSwatch(s.outcome) == sw {
				pts = append(pts, plotter.XY{X: secs(s.at), Y: float64(counts[i])})
			}
		}
		if err := addMarks(p, pts, sw.color); err != nil {
			return nil, nil, err
		}
		if len(pts) > 0 {
			used = append(used, sw)
		}
	}
	var hits plotter.XYs
	for _, at := range t.hits {
		hits = append(hits, plotter.XY{X: secs(at), Y: hitRow})
	}
	if err := addMarks(p, hits, hitColor.color); err != nil {
		return nil, nil, err
	}
	if err := addRims(p, hits, hitRim); err != nil {
		return nil, nil, err
	}
	if len(hits) > 0 {
		used = append(used, hitColor)
	}
	used = append(used, waitSwatches...)

	ticks := []plot.Tick{{Value: hitRow, Label: "cache"}}
	if nLanes > 0 {
		ticks = append(ticks, plot.Tick{Value: laneTop - laneStep*float64(nLanes-1)/2, Label: "waits"})
	}
	for n := 0; float64(n) < top; n++ {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: fmt.Sprint(n)})
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	// Add widened the x range to the data (a count falls back a second after the last start);
	// every origin of a report shares 0 to end, which covers all of them (timeline.last).
	p.X.Min, p.X.Max = 0, xMax
	return p, used, nil
}

// budgetSteps is the budget line: the budget, stepping down and up where the door lowered the
// rate after a 429 (Origin.Lowered), to xMax.
func budgetSteps(o Origin, secs func(time.Time) float64, xMax float64) plotter.XYs {
	pts := plotter.XYs{{X: 0, Y: o.Budget}}
	for _, c := range o.Lowered {
		x := min(max(secs(c.At), 0), xMax)
		if c.Reason == earlierCrawl {
			x = 0 // the rate held before the origin's first event
		}
		if last := &pts[len(pts)-1]; last.X == x {
			last.Y = c.Rate // two changes at once: the later one holds
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: c.Rate})
	}
	return append(pts, plotter.XY{X: xMax, Y: pts[len(pts)-1].Y})
}

// rollingCounts returns, for each start (sorted), the starts in the second up to and including
// it: the window (t-1s, t], whose largest value is the busiest window [t, t+1s) of the log.
func rollingCounts(starts []mark) []int {
	counts := make([]int, len(starts))
	first := 0
	for i, s := range starts {
		for s.at.Sub(starts[first].at) >= time.Second {
			first++
		}
		counts[i] = i - first + 1
	}
	return counts
}

// countSteps is the rolling count as a step function: up by one at each start, down by one a
// second later.
func countSteps(starts []mark, secs func(time.Time) float64) plotter.XYs {
	type change struct {
		at    float64
		delta int
	}
	changes := make([]change, 0, 2*len(starts))
	for _, s := range starts {
		changes = append(changes, change{secs(s.at), 1}, change{secs(s.at.Add(time.Second)), -1})
	}
	// At equal times the drop comes first: the window is (t-1s, t].
	slices.SortStableFunc(changes, func(a, b change) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		return a.delta - b.delta
	})
	pts := plotter.XYs{{X: 0, Y: 0}}
	n := 0
	for _, c := range changes {
		n += c.delta
		pts = append(pts, plotter.XY{X: c.at, Y: float64(n)})
	}
	return pts
}

// assignLanes gives each wait the lowest lane free at its beginning, so overlapping waits (two
// requests held at once) are drawn one under the other.
func assignLanes(waits []span) []int {
	order := make([]int, len(waits))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return waits[a].from.Compare(waits[b].from) })
	lanes := make([]int, len(waits))
	var busyUntil []time.Time
	for _, i := range order {
		lane := slices.IndexFunc(busyUntil, func(t time.Time) bool { return !t.After(waits[i].from) })
		if lane < 0 {
			lane = len(busyUntil)
			busyUntil = append(busyUntil, time.Time{})
		}
		busyUntil[lane] = waits[i].to
		lanes[i] = lane
	}
	return lanes
}

func box(x0, x1, y0, y1 float64) plotter.XYs {
	return plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

func addPolygon(p *plot.Plot, rings []plotter.XYer, c color.Color) error {
	if len(rings) == 0 {
		return nil
	}
	poly, err := plotter.NewPolygon(rings...)
	if err != nil {
		return err
	}
	poly.Color = c
	poly.LineStyle.Width = 0
	p.Add(poly)
	return nil
}

func addRims(p *plot.Plot, pts plotter.XYs, c color.Color) error {
	if len(pts) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.RingGlyph{}}
	p.Add(s)
	return nil
}

func addMarks(p *plot.Plot, pts plotter.XYs, c color.Color) error {
	if len(pts) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	p.Add(s)
	return nil
}
