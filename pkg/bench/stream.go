package bench

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// eachLine calls fn for every line of r, in one pass with bounded memory:
// i is the 0-based line number, l the line as the parsers read it (line
// end and Open MPI's --tag-output prefix removed, cut to maxLineBytes) and
// raw the same before the prefix was removed. A last line without a line
// end counts; an empty input has no lines. It returns r's read error.
func eachLine(r io.Reader, fn func(i int, l, raw string)) error {
	br := bufio.NewReaderSize(r, maxLineBytes+1)
	i := 0
	for {
		b, err := br.ReadSlice('\n')
		long := errors.Is(err, bufio.ErrBufferFull)
		if long { // the rest of a line longer than maxLineBytes is not read
			b = b[:maxLineBytes]
		}
		if len(b) == 0 && err != nil {
			if err == io.EOF {
				return nil
			}
			if !long {
				return err
			}
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		line := string(b)
		if long {
			for {
				_, err = br.ReadSlice('\n')
				if !errors.Is(err, bufio.ErrBufferFull) {
					break
				}
			}
			if err != nil && err != io.EOF {
				return err
			}
		}
		raw := strings.TrimSuffix(line, "\r")
		l := raw
		if strings.HasPrefix(l, "[") {
			if m := reMPITag.FindString(l); m != "" {
				l = l[len(m):]
			}
		}
		fn(i, l, raw)
		i++
		if err == io.EOF {
			return nil
		}
		if err != nil && !long {
			return err
		}
	}
}
