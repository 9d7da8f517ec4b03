package quote_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/quote"
)

// Quote a value as one POSIX sh word: what a generated script gets when a
// value cannot be held to a grammar.
func ExampleSh() {
	fmt.Println(quote.Sh("eth0"))
	fmt.Println(quote.Sh("it's $(rm -rf /)"))
	// Output:
	// eth0
	// 'it'\''s $(rm -rf /)'
}
