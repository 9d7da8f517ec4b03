package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"
)

// esxiTarget is `rdggen apply --target esxi` (not yet implemented).
func esxiTarget() *applyTarget {
	return &applyTarget{
		name:  "esxi",
		help:  "not yet implemented",
		flags: func(fs *pflag.FlagSet) {},
		run: func(ctx context.Context, env *applyEnv) error {
			return errors.New("apply --target esxi is not implemented yet")
		},
	}
}
