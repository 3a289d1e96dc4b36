// This file decides how the progress line names origins that have a label (the demo's "blog").

package report

// Name has the progress line show each origin that labels names (by budget key) by that name
// instead of its host:port: "blog 4/2/1". Call it before the crawl starts or during it.
func (p *Progress) Name(labels map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.labels = labels
}

// named is m with the keys labels names replaced by their names; two origins of one name add up.
func named[V int | Pending](m map[string]V, labels map[string]string) map[string]V {
	if len(labels) == 0 {
		return m
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		if l := labels[k]; l != "" {
			k = l
		}
		out[k] = plus(out[k], v)
	}
	return out
}

func plus[V int | Pending](a, b V) V {
	if p, ok := any(a).(Pending); ok {
		q := any(b).(Pending)
		return any(Pending{Queued: p.Queued + q.Queued, Waiting: p.Waiting + q.Waiting}).(V)
	}
	return any(any(a).(int) + any(b).(int)).(V)
}
