package identity_test

import (
	"errors"
	"fmt"

	"github.com/politecrawl/etiquette/politeness/identity"
)

func ExampleIdentity_UserAgent() {
	id := identity.Identity{Token: "ExampleBot", Version: "1.0",
		InfoURL: "https://example.org/bot", Contact: "bot@example.org"}
	if _, err := id.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(id.UserAgent())
	fmt.Println(id.From())
	fmt.Println(id.UserTriggeredAgent())
	// Output:
	// ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)
	// bot@example.org
	// ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)
}

func ExampleParse() {
	id, warnings, err := identity.Parse(
		"FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", identity.FAU)
	fmt.Println(id.CrawlToken(), id.UserTriggeredToken(), len(warnings), err)

	_, _, err = identity.Parse("FAU-RRZE-Legalcheck/1.0", identity.FAU)
	var invalid *identity.ValidationError
	if errors.As(err, &invalid) {
		for _, p := range invalid.Problems {
			fmt.Println(string(p.Field)+":", p.Message)
		}
	}
	// Output:
	// FAU-RRZE-Legalcheck FAU-RRZE-Legalcheck-User 0 <nil>
	// InfoURL: no info URL: site operators need a page that explains the crawler
	// Contact: no contact e-mail address: the RRZE crawler rules require one
}
