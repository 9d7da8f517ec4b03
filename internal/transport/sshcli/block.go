package sshcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Reply is the device's answer to one line of a block (SendBlock).
type Reply struct {
	// Command is the line as sent.
	Command string
	// Output is the reply without the echo and the prompt.
	Output string
	// Err is a *DeviceError when the device refused the line, nil when it
	// took it.
	Err error
	// Level is the privilege level of the prompt that ended the reply
	// (a line that entered a sub-mode shows ConfigSub).
	Level string
	// Consumed reports a line the device never ran as a command: it was
	// read as the answer to the question the line before it asked (and
	// Err says so).
	Consumed bool
}

// SendBlock sends cmds in one write, as a paste into the terminal, and then
// reads the device's answer line by line: each line's echo, reply and the
// prompt that follows it. A CLI reads pasted lines one at a time, in order,
// and runs each before it reads the next (the type-ahead of a terminal in
// non-canonical mode, termios(3)), so the k-th prompt ends the k-th line's
// reply and every line has its own result. This is how the guide configures
// the switch (its commands are pasted in config mode) and what the
// generated switch/<name>.cfg is for.
//
// What SendBlock cannot do is stop at a refused line: the lines after it
// are already on their way and the device runs them. Callers therefore
// batch only lines whose meaning does not depend on each other, and read
// every Reply. A line that asks a question (a confirmation) makes the
// device read the next line as its answer: that next line is Consumed and
// both carry an error; a question on the last line is declined.
//
// The replies are in the order of cmds. A transport error (or ErrTimeout)
// returns the replies read so far with it; the session should then be
// closed.
func (s *Session) SendBlock(ctx context.Context, cmds []string) ([]Reply, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	if s.o.Transcript != nil {
		fmt.Fprintf(s.o.Transcript, "\n<<< (block of %d)\n%s\n", len(cmds), strings.Join(cmds, "\n"))
	}
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(c)
		b.WriteString(s.p.Return)
	}
	if _, err := s.w.Write([]byte(b.String())); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	replies := make([]Reply, 0, len(cmds))
	for i := 0; i < len(cmds); i++ {
		cmd := cmds[i]
		var out, question string
		var err error
		if i+1 < len(cmds) {
			// This line's reply ends where the next line's echo starts.
			out, question, err = s.readUntilEcho(ctx, cmds[i+1])
		} else {
			var q *Question
			out, q, err = s.readPrompt(ctx, s.o.timeout(), false)
			if err == nil && q != nil {
				_, question = lastLine([]byte(out))
				if question = strings.TrimSpace(question); question == "" {
					question = "a question"
				}
				if err = s.write(s.p.Decline); err == nil {
					var rest string
					rest, _, err = s.readPrompt(ctx, s.o.timeout(), false)
					out += rest
				}
			}
		}
		if err != nil {
			return replies, fmt.Errorf("line %d of %d of a block, %q: %w", i+1, len(cmds), cmd, err)
		}
		if question == "" {
			r := Reply{Command: cmd, Output: clean(out, cmd), Level: s.level}
			if msg := s.deviceMessage(r.Output); msg != "" {
				r.Err = &DeviceError{Command: cmd, Message: msg, Output: r.Output}
			}
			replies = append(replies, r)
			continue
		}
		reply := clean(out, cmd)
		replies = append(replies, Reply{Command: cmd, Output: reply, Level: s.level, Err: &DeviceError{Command: cmd, Output: reply,
			Message: "asked " + question + " and rdggen declined (use the command's force form)"}})
		if i+1 == len(cmds) {
			break
		}
		// The next line was read as the answer: it never ran. Its
		// reply (the question's outcome) ends at the line after it.
		i++
		if i+1 < len(cmds) {
			_, _, err = s.readUntilEcho(ctx, cmds[i+1])
		} else {
			_, _, err = s.readPrompt(ctx, s.o.timeout(), false)
		}
		replies = append(replies, Reply{Command: cmds[i], Level: s.level, Consumed: true, Err: &DeviceError{Command: cmds[i],
			Message: fmt.Sprintf("not run: the switch read it as the answer to %q, asked by the line before it", question)}})
		if err != nil {
			return replies, fmt.Errorf("line %d of %d of a block, %q: %w", i+1, len(cmds), cmds[i], err)
		}
	}
	return replies, nil
}

// readUntilEcho reads until a whole line that is a prompt followed by the
// echo of next (the device has started on the next pasted line) and
// returns what came before that line, consuming the line and recording the
// prompt and its level. When a question followed by next comes first
// (the device read next as its answer), it returns the output up to and
// including that line and the question.
func (s *Session) readUntilEcho(ctx context.Context, next string) (string, string, error) {
	timer := time.NewTimer(s.o.timeout())
	defer timer.Stop()
	next = strings.TrimSpace(next)
	from := 0 // lines before it are complete and are no boundary
	for {
		s.mu.Lock()
		for st := from; st < len(s.buf); {
			en := bytes.IndexByte(s.buf[st:], '\n')
			complete := en >= 0
			if complete {
				en += st
			} else {
				en = len(s.buf)
			}
			text := strings.TrimRight(string(s.buf[st:en]), "\r")
			if k := strings.LastIndexByte(text, '\r'); k >= 0 {
				text = text[k+1:]
			}
			if head, ok := strings.CutSuffix(text, next); ok && complete {
				for _, l := range s.p.Levels {
					if l.Prompt.MatchString(head) {
						// Consume the prompt and echo line too: what follows
						// is the next line's reply only, so a prompt at its
						// end is that reply's end (a bare prompt before the
						// echo arrives must not be mistaken for it).
						out := string(s.buf[:st])
						s.buf = s.buf[en+1:]
						s.prompt, s.level = head, l.Name
						s.mu.Unlock()
						return out, "", nil
					}
				}
				if s.p.Confirm != nil && s.p.Confirm.MatchString(head) {
					out := string(s.buf[:en+1])
					s.buf = s.buf[en+1:]
					s.mu.Unlock()
					return out, strings.TrimSpace(head), nil
				}
			}
			if !complete {
				break
			}
			st = en + 1
			from = st
		}
		err := s.err
		_, last := lastLine(s.buf)
		s.mu.Unlock()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", "", errors.New("the device closed the session")
			}
			return "", "", fmt.Errorf("read: %w", err)
		}
		select {
		case <-s.note:
		case <-s.done:
		case <-timer.C:
			return "", "", fmt.Errorf("%w after %s (last line %q)", ErrTimeout, s.o.timeout(), last)
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
	}
}

// Writes counts the writes to the device since the session opened: each
// command, block, escalation and answer to a question or a pager is one, and
// each is followed by a wait for the device's reply, so this is the
// session's round trips.
func (s *Session) Writes() int { return s.w.(*countingWriter).n }

// countingWriter counts Write calls (the session is not used concurrently).
type countingWriter struct {
	w io.Writer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n++
	return c.w.Write(p)
}
