package infopage

// This file decides how the page looks: one HTML template (html/template escapes every value)
// and one Markdown template over the same content.

import (
	htmltemplate "html/template"
	"strings"
	"text/template"
)

var htmlPage = htmltemplate.Must(htmltemplate.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222;background:#fff}
code,pre{font-family:ui-monospace,monospace;background:#f3f3f3}
code{padding:0 .2em;overflow-wrap:anywhere}
pre{padding:.6em;overflow-x:auto}
figure{margin:1em 0}
figcaption{font-weight:600}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Sections}}<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{range .Paras}}<p>{{template "spans" .}}</p>
{{end}}{{with .Items}}<ul>
{{range .}}<li>{{template "spans" .}}</li>
{{end}}</ul>
{{end}}{{range .Blocks}}<figure><figcaption>{{.Caption}}</figcaption><pre>{{.Text}}</pre></figure>
{{end}}</section>
{{end}}</body>
</html>
{{define "spans"}}{{range .}}{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else if .Code}}<code>{{.Text}}</code>{{else}}{{.Text}}{{end}}{{end}}{{end}}`))

var markdownPage = template.Must(template.New("page").Funcs(template.FuncMap{"md": mdText, "spans": mdSpans}).Parse(
	"# {{md .Title}}\n" +
		"{{range .Sections}}\n## {{md .Title}}\n" +
		"{{range .Paras}}\n{{spans .}}\n{{end}}" +
		"{{with .Items}}\n{{range .}}- {{spans .}}\n{{end}}{{end}}" +
		"{{range .Blocks}}\n{{md .Caption}}:\n\n```text\n{{.Text}}```\n{{end}}" +
		"{{end}}"))

// mdEscaper escapes what Markdown would read as markup in running text.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`, "#", `\#`)

func mdText(s string) string { return mdEscaper.Replace(s) }

// mdCode writes s as a code span, with a fence longer than any run of backticks in it
// (CommonMark §6.1).
func mdCode(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

func mdSpans(p para) string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.Href != "":
			b.WriteString("[" + mdText(s.Text) + "](<" + strings.NewReplacer("<", "%3C", ">", "%3E").Replace(s.Href) + ">)")
		case s.Code:
			b.WriteString(mdCode(s.Text))
		default:
			b.WriteString(mdText(s.Text))
		}
	}
	return b.String()
}
