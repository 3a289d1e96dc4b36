package main

import (
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/politeness/identity"
)

// TestEveryIdentityFieldHasAFlag: each field the identity package reports has a flag and a name
// as part of a User-Agent, and its Go name never reaches the command line.
func TestEveryIdentityFieldHasAFlag(t *testing.T) {
	fields := []identity.Field{identity.FieldUserAgent, identity.FieldProfile, identity.FieldToken, identity.FieldOrg,
		identity.FieldBot, identity.FieldVersion, identity.FieldInfoURL, identity.FieldContact, identity.FieldUserToken,
		identity.FieldVerbatim}
	for _, f := range fields {
		if fieldFlag[f] == "" || partName[f] == "" {
			t.Errorf("field %s: flag %q, part name %q", f, fieldFlag[f], partName[f])
		}
		if got := inFlags.Replace("set Identity." + string(f)); strings.Contains(got, "Identity.") {
			t.Errorf("Identity.%s is not translated: %q", f, got)
		}
	}
}

func TestWhere(t *testing.T) {
	cases := []struct {
		field  identity.Field
		fromUA bool
		want   string
	}{
		{identity.FieldContact, false, "--contact"},
		{identity.FieldVersion, false, "--bot-version"},
		{identity.FieldUserAgent, false, "the User-Agent"},
		{identity.FieldContact, true, "--ua (contact)"},
		{identity.FieldInfoURL, true, "--ua (info URL)"},
		{identity.FieldUserAgent, true, "--ua"},
		{identity.FieldUserToken, true, "--user-token"},
		{identity.FieldProfile, true, "--profile"},
	}
	for _, tc := range cases {
		if got := where(tc.field, tc.fromUA); got != tc.want {
			t.Errorf("where(%s, fromUA=%v) = %q, want %q", tc.field, tc.fromUA, got, tc.want)
		}
	}
	if got := inFlags.Replace("set Identity.Profile to identity.FAU, or use Identity.Token instead of Identity.Org and Identity.Bot"); got != "set --profile to fau, or use --token instead of --org and --bot" {
		t.Errorf("inFlags: %q", got)
	}
}
