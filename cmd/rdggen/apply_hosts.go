package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"
)

// hostsTarget is `rdggen apply --target hosts` (not yet implemented).
func hostsTarget() *applyTarget {
	return &applyTarget{
		name:  "hosts",
		help:  "not yet implemented",
		flags: func(fs *pflag.FlagSet) {},
		run: func(ctx context.Context, env *applyEnv) error {
			return errors.New("apply --target hosts is not implemented yet")
		},
	}
}
