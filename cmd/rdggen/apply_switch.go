package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"
)

// switchTarget is `rdggen apply --target switch` (not yet implemented).
func switchTarget() *applyTarget {
	return &applyTarget{
		name:  "switch",
		help:  "not yet implemented",
		flags: func(fs *pflag.FlagSet) {},
		run: func(ctx context.Context, env *applyEnv) error {
			return errors.New("apply --target switch is not implemented yet")
		},
	}
}
