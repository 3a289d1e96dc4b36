// This file decides the report's HTML page: one self-contained document, no script and nothing
// fetched, with each origin's figures and its timeline as inline SVG.

package report

import (
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"slices"
	"time"
)

var page = template.Must(template.New("index.html").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>etiquette report</title>
<style>
body { font: 15px/1.45 {{.Font}}; margin: 2em auto; max-width: 68em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 2.2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; } th { text-align: left; font-weight: 600; padding-right: 1.5em; vertical-align: top; }
td { padding: .1em 0; } svg { width: 100%; height: auto; }
ul.legend { list-style: none; padding: 0; font-size: .85em; } ul.legend li { display: inline-block; margin-right: 1.4em; }
.sw { display: inline-block; width: .9em; height: .9em; margin-right: .35em; vertical-align: -.1em; border: 1px solid #999; }
.over { color: #b00; font-weight: 600; }
</style>
</head>
<body>
<h1>etiquette report</h1>
{{if .About}}<p class="about">{{.About}}</p>
{{end}}<p>{{.Headline}}. The raw events are in <a href="events.jsonl">events.jsonl</a>.</p>
{{range .Origins}}
<h2>{{.Name}}</h2>
<table>
{{range .Lines}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</table>
{{if .Over}}<p class="over">More starts in one second than the budget allows.</p>{{end}}
{{if .SVG}}<figure>
{{.SVG}}
<figcaption><ul class="legend">
<li><span class="sw" style="background:#000;height:2px"></span>starts in the last second</li>
<li><span class="sw" style="background:{{.BudgetColor}};height:2px"></span>{{.BudgetLabel}}</li>
{{range .Legend}}<li><span class="sw" style="background:{{.Color}}"></span>{{.Label}}</li>
{{end}}</ul></figcaption>
</figure>{{end}}
{{end}}
</body>
</html>
`))

type htmlPage struct {
	Font     template.CSS
	About    string
	Headline string
	Origins  []htmlOrigin
}

type htmlOrigin struct {
	Name        string
	Lines       []figure
	Over        bool
	BudgetLabel string
	BudgetColor template.CSS
	SVG         template.HTML
	Legend      []htmlSwatch
}

// figure's fields are unexported; the template reads them through these.
func (f figure) Name() string  { return f.name }
func (f figure) Value() string { return f.value }

type htmlSwatch struct {
	Label string
	Color template.CSS
}

// WriteHTML writes the report as one HTML document, self-contained: no script, no stylesheet
// or image to fetch; each origin's timeline is inline SVG drawn with gonum.org/v1/plot. The page
// links events.jsonl beside it, as a [Dir] made by [Create] writes it.
func (r *Report) WriteHTML(w io.Writer) error {
	data := htmlPage{Font: template.CSS(fontStack), About: r.About, Headline: r.headline()}
	// Every origin's timeline has the same x axis, so the plots of one page can be compared.
	end := r.End
	for _, o := range r.Origins {
		end = maxTime(end, o.timeline.last())
	}
	for _, o := range r.Origins {
		h := htmlOrigin{Name: o.title(), Lines: o.lines(r.Start), Over: float64(o.BusiestSecond) > o.Budget,
			BudgetLabel: budgetLabel(o), BudgetColor: cssColor(budgetColor)}
		if len(o.timeline.starts)+len(o.timeline.hits)+len(o.timeline.waits)+len(o.timeline.pauses) > 0 {
			svg, legend, err := svgTimeline(o, r.Start, end)
			if err != nil {
				return fmt.Errorf("report: the timeline of %s: %w", o.Origin, err)
			}
			// The SVG is gonum's rendering of numbers and of this package's fixed labels: no
			// text from the crawl reaches it.
			h.SVG = template.HTML(svg)
			for _, sw := range legend {
				h.Legend = append(h.Legend, htmlSwatch{Label: sw.label, Color: cssColor(sw.color)})
			}
		}
		data.Origins = append(data.Origins, h)
	}
	return page.Execute(w, data)
}

// budgetLabel is the legend of the budget line: the budget, and the lowest rate the door
// allowed when a 429 lowered it.
func budgetLabel(o Origin) string {
	s := fmt.Sprintf("budget: %g starts/s", o.Budget)
	if len(o.Lowered) == 0 {
		return s
	}
	low := slices.MinFunc(o.Lowered, func(a, b RateChange) int { return cmp.Compare(a.Rate, b.Rate) })
	return s + fmt.Sprintf(", lowered to %.3g/s %s", low.Rate, low.Reason)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func cssColor(c color.NRGBA) template.CSS {
	return template.CSS(fmt.Sprintf("rgba(%d,%d,%d,%.2f)", c.R, c.G, c.B, float64(c.A)/255))
}
