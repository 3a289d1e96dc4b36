package report

import (
	"image/color"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
)

var zero = time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)

func ev(ms int, typ events.Type, origin, path string, status int, cache string) events.Event {
	return events.Event{Time: zero.Add(time.Duration(ms) * time.Millisecond), Type: typ, URL: "http://" + origin + path,
		Origin: origin, Status: status, Cache: cache}
}

// TestEveryTimelineSharesTheXAxis: the plots of one page run from 0 to the same end, with the
// same ticks, though one origin's starts end seconds before the other's and the count of the
// last start falls back a second after the report's last event.
func TestEveryTimelineSharesTheXAxis(t *testing.T) {
	var evs []events.Event
	for i := range 8 {
		evs = append(evs, ev(1000*i, events.Admitted, "long.test", "/p", 0, ""), ev(1000*i+5, events.Response, "long.test", "/p", 200, cacheMiss))
	}
	evs = append(evs, ev(0, events.Admitted, "short.test", "/", 0, ""), ev(10, events.Response, "short.test", "/", 200, cacheMiss))
	r := Summarize(evs, nil, Options{})
	end := r.End
	for _, o := range r.Origins {
		end = maxTime(end, o.timeline.last())
	}
	var ranges [][2]float64
	var ticks [][]string
	for _, o := range r.Origins {
		p, _, err := timelinePlot(o, r.Start, end)
		if err != nil {
			t.Fatal(err)
		}
		ranges = append(ranges, [2]float64{p.X.Min, p.X.Max})
		var labels []string
		for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
			labels = append(labels, tk.Label)
		}
		ticks = append(ticks, labels)
	}
	if ranges[0] != ranges[1] || !slices.Equal(ticks[0], ticks[1]) {
		t.Errorf("x ranges %v, ticks %v; want one range and one set of ticks for every origin", ranges, ticks)
	}
	if want := 8.0; math.Abs(ranges[0][1]-want) > 0.001 {
		t.Errorf("x range ends at %g s; want %g, a second after the last start", ranges[0][1], want)
	}
}

// TestAnAnswerGivenUpOnIsNotDrawnAsAMiss: a 503 the door did not re-send is a start that got no
// full answer, though the cache, which took part, calls it a miss.
func TestAnAnswerGivenUpOnIsNotDrawnAsAMiss(t *testing.T) {
	evs := []events.Event{ev(0, events.Admitted, "a.test", "/", 0, ""), ev(10, events.Response, "a.test", "/", 503, cacheMiss)}
	r := Summarize(evs, nil, Options{})
	_, used, err := timelinePlot(r.Origins[0], r.Start, r.End)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(used, func(s swatch) bool { return s.key == cacheMiss }) ||
		!slices.ContainsFunc(used, func(s swatch) bool { return s.key == outcomeRetried }) {
		t.Errorf("the 503 is drawn as %v; want the colour of a 429/5xx answer", used)
	}
}

// TestDotColoursAreDistinguishable: the dots of a timeline (the starts by outcome, the answers
// from the cache) differ by a CIEDE2000 distance of at least 20 for everyone, and as readers
// with deuteranopia or protanopia see them (Machado, Oliveira and Fernandes 2009, severity 1).
// Before issue 27 the 304 green and the re-sent red were 5 apart under deuteranopia, the 304
// green and the cache's yellow-green 12 under protanopia.
func TestDotColoursAreDistinguishable(t *testing.T) {
	dots := append(slices.Clone(outcomeColors), hitColor)
	vision := map[string]*[3][3]float64{
		"normal vision": nil,
		"deuteranopia":  {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
		"protanopia":    {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
	}
	for name, m := range vision {
		for i, a := range dots {
			for _, b := range dots[i+1:] {
				if d := ciede2000(lab(a.color, m), lab(b.color, m)); d < 20 {
					t.Errorf("%s: %q and %q are %.0f apart; want at least 20", name, a.label, b.label, d)
				}
			}
		}
	}
}

// lab is c in CIELAB (D65), as a reader of vision m (nil: normal) sees it.
func lab(c color.NRGBA, m *[3][3]float64) [3]float64 {
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	rgb := [3]float64{lin(c.R), lin(c.G), lin(c.B)}
	if m != nil {
		var s [3]float64
		for i := range 3 {
			s[i] = min(1, max(0, m[i][0]*rgb[0]+m[i][1]*rgb[1]+m[i][2]*rgb[2]))
		}
		rgb = s
	}
	x := (0.4124*rgb[0] + 0.3576*rgb[1] + 0.1805*rgb[2]) / 0.95047
	y := 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
	z := (0.0193*rgb[0] + 0.1192*rgb[1] + 0.9505*rgb[2]) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// ciede2000 is the CIEDE2000 colour difference (Sharma, Wu and Dalal 2005).
func ciede2000(p, q [3]float64) float64 {
	rad := func(deg float64) float64 { return deg * math.Pi / 180 }
	c1, c2 := math.Hypot(p[1], p[2]), math.Hypot(q[1], q[2])
	cb7 := math.Pow((c1+c2)/2, 7)
	g := 0.5 * (1 - math.Sqrt(cb7/(cb7+math.Pow(25, 7))))
	a1, a2 := (1+g)*p[1], (1+g)*q[1]
	c1p, c2p := math.Hypot(a1, p[2]), math.Hypot(a2, q[2])
	hue := func(b, a float64) float64 { return math.Mod(math.Atan2(b, a)*180/math.Pi+360, 360) }
	h1, h2 := hue(p[2], a1), hue(q[2], a2)
	dh := h2 - h1
	switch {
	case c1p*c2p == 0:
		dh = 0
	case dh > 180:
		dh -= 360
	case dh < -180:
		dh += 360
	}
	dL, dC, dH := q[0]-p[0], c2p-c1p, 2*math.Sqrt(c1p*c2p)*math.Sin(rad(dh/2))
	lb, cbp := (p[0]+q[0])/2, (c1p+c2p)/2
	hb := h1 + h2
	switch {
	case c1p*c2p == 0:
	case math.Abs(h1-h2) <= 180:
		hb /= 2
	case hb < 360:
		hb = (hb + 360) / 2
	default:
		hb = (hb - 360) / 2
	}
	tt := 1 - 0.17*math.Cos(rad(hb-30)) + 0.24*math.Cos(rad(2*hb)) + 0.32*math.Cos(rad(3*hb+6)) - 0.20*math.Cos(rad(4*hb-63))
	dth := 30 * math.Exp(-math.Pow((hb-275)/25, 2))
	cbp7 := math.Pow(cbp, 7)
	rc := 2 * math.Sqrt(cbp7/(cbp7+math.Pow(25, 7)))
	sl := 1 + 0.015*(lb-50)*(lb-50)/math.Sqrt(20+(lb-50)*(lb-50))
	sc, sh := 1+0.045*cbp, 1+0.015*cbp*tt
	rt := -math.Sin(rad(2*dth)) * rc
	return math.Sqrt(math.Pow(dL/sl, 2) + math.Pow(dC/sc, 2) + math.Pow(dH/sh, 2) + rt*(dC/sc)*(dH/sh))
}
