package main

// This file decides the demo command, which is not built yet: its help, and its refusal.

import "context"

var demoDoc = commandDoc{
	name:  "demo",
	about: notYet + "A guided demonstration of what etiquette does to a crawler's requests.",
	exits: `  2  not supported yet`,
}

func runDemo(_ context.Context, args []string, e env) (int, error) {
	if _, err := parseFlags(newFlagSet(demoDoc), demoDoc, args, e); err != nil {
		return exitUsage, err
	}
	return exitUsage, usagef("not supported yet; run 'etiquette -h' for the commands that are")
}
