// Package sshcli drives a network device's interactive CLI over SSH (pty +
// shell): it reads until a prompt, moves between privilege levels, answers
// the pager, and sends one command at a time, keeping device errors (a reply
// the device refused) apart from transport errors (a broken or silent link).
// What is specific to a device OS is data: see Platform and ONYX.
package sshcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// DeviceError is a command the device refused: a reply line matched the
// platform's ErrorLine (ONYX: a line starting with `%`), or the command asked
// for a confirmation that the session declined. The session is still usable.
type DeviceError struct {
	// Command is the command as sent.
	Command string
	// Message is the device's message, e.g. `% Unrecognized command "foo".`.
	Message string
	// Output is the whole reply, echo and prompt removed.
	Output string
}

func (e *DeviceError) Error() string {
	return fmt.Sprintf("device refused %q: %s", e.Command, e.Message)
}

// ErrTimeout is wrapped by the error of a command or read that saw no prompt in time.
var ErrTimeout = errors.New("timed out waiting for the prompt")

// Options tune a Session.
type Options struct {
	// CommandTimeout bounds each command from sending to its prompt;
	// default 60 s (docs/rules.md#cli-session: ≥ 60 s, `roce` and saves are slow).
	CommandTimeout time.Duration
	// EnableSecret answers a password question of an escalation (`enable`);
	// never logged.
	EnableSecret string
	// Width and Height of the pty; default 511 × 24.
	Width, Height int
	// Transcript, when set, receives every byte read and every command
	// sent (not secrets), for debugging and recorded tests.
	Transcript io.Writer
}

func (o Options) timeout() time.Duration {
	if o.CommandTimeout > 0 {
		return o.CommandTimeout
	}
	return 60 * time.Second
}

// Session is one interactive CLI session. Its methods are not safe for
// concurrent use.
type Session struct {
	p    *Platform
	o    Options
	w    io.Writer
	ssh  *ssh.Session
	mu   sync.Mutex
	buf  []byte // cleaned text read and not yet consumed
	cl   cleaner
	err  error         // read error (io.EOF when the device closed)
	note chan struct{} // signalled after each read
	done chan struct{} // closed when reading stops

	prompt string
	level  string
}

// Open starts a shell with a pty on client, waits for the first prompt
// (answering the platform's login questions) and sends the platform's
// OnOpen commands (ONYX: paging off). ctx bounds the whole opening.
func Open(ctx context.Context, client *ssh.Client, p *Platform, o Options) (*Session, error) {
	sess, err := client.NewSession()
	if err != nil {
		return nil, fmt.Errorf("ssh session: %w", err)
	}
	w, h := o.Width, o.Height
	if w == 0 {
		w = 511
	}
	if h == 0 {
		h = 24
	}
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	if err := sess.RequestPty("vt100", h, w, modes); err != nil {
		sess.Close()
		return nil, fmt.Errorf("ssh pty: %w", err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		sess.Close()
		return nil, err
	}
	if err := sess.Shell(); err != nil {
		sess.Close()
		return nil, fmt.Errorf("ssh shell: %w", err)
	}
	s := New(stdin, stdout, p, o)
	s.ssh = sess
	if err := s.Start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// New wraps an already open interactive stream (stdin w, stdout r); Open
// does this for SSH, tests do it for recorded transcripts. Call Start next.
func New(w io.Writer, r io.Reader, p *Platform, o Options) *Session {
	s := &Session{p: p, o: o, w: &countingWriter{w: w}, note: make(chan struct{}, 1), done: make(chan struct{})}
	go s.readLoop(r)
	return s
}

// Start waits for the first prompt, answering login questions, then sends
// the platform's OnOpen commands.
func (s *Session) Start(ctx context.Context) error {
	for {
		_, q, err := s.readPrompt(ctx, s.o.timeout(), true)
		if err != nil {
			return fmt.Errorf("waiting for the first prompt: %w", err)
		}
		if q == nil {
			break
		}
		if q.Pattern == s.p.PasswordPrompt {
			return errors.New("the device asks for a password at login")
		}
		if err := s.write(q.Answer); err != nil {
			return err
		}
	}
	for _, c := range s.p.OnOpen {
		if _, err := s.Send(ctx, c); err != nil {
			return fmt.Errorf("session setup: %w", err)
		}
	}
	return nil
}

// Close ends the session (the SSH channel, not the client).
func (s *Session) Close() error {
	if s.ssh != nil {
		return s.ssh.Close()
	}
	if c, ok := s.w.(*countingWriter).w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Prompt is the last prompt seen, e.g. `swx-mld-1-2 [standalone: master] (config) # `.
func (s *Session) Prompt() string { return s.prompt }

// Level is the privilege level of the last prompt ("" when unknown).
func (s *Session) Level() string { return s.level }

func (s *Session) readLoop(r io.Reader) {
	b := make([]byte, 32*1024)
	for {
		n, err := r.Read(b)
		if n > 0 {
			if s.o.Transcript != nil {
				s.o.Transcript.Write(b[:n])
			}
			s.mu.Lock()
			s.buf = s.cl.feed(s.buf, b[:n])
			s.mu.Unlock()
			select {
			case s.note <- struct{}{}:
			default:
			}
		}
		if err != nil {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
			close(s.done)
			return
		}
	}
}

func (s *Session) write(line string) error {
	if _, err := io.WriteString(s.w, line+s.p.Return); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// lastLine returns the start of the last line of b and that line as the
// terminal shows it (after its last carriage return).
func lastLine(b []byte) (int, string) {
	start := bytes.LastIndexByte(b, '\n') + 1
	line := string(b[start:])
	if k := strings.LastIndexByte(strings.TrimRight(line, "\r"), '\r'); k >= 0 {
		line = line[k+1:]
	}
	return start, line
}

// readPrompt reads until a level's prompt ends the output and returns the
// output before it, recording the prompt and its level. Pager prompts are
// answered and dropped. When a question ends the output first (a login
// question, only when login is set; a confirmation; a password prompt) it
// returns the output so far and the question, with Pattern telling which.
func (s *Session) readPrompt(ctx context.Context, timeout time.Duration, login bool) (string, *Question, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		start, line := lastLine(s.buf)
		if s.p.Pager != nil {
			if loc := s.p.Pager.FindStringIndex(line); loc != nil && loc[0] == 0 {
				s.buf = s.buf[:start]
				s.mu.Unlock()
				if _, err := io.WriteString(s.w, s.p.PagerAnswer); err != nil {
					return "", nil, fmt.Errorf("pager: %w", err)
				}
				continue
			}
		}
		for _, l := range s.p.Levels {
			if l.Prompt.MatchString(line) {
				out := string(s.buf[:start])
				s.buf = s.buf[:0]
				s.prompt, s.level = line, l.Name
				s.mu.Unlock()
				return out, nil, nil
			}
		}
		var q *Question
		if login {
			for i := range s.p.LoginQuestions {
				if s.p.LoginQuestions[i].Pattern.MatchString(line) {
					q = &s.p.LoginQuestions[i]
				}
			}
		}
		if q == nil && s.p.Confirm != nil && s.p.Confirm.MatchString(line) {
			q = &Question{Pattern: s.p.Confirm, Answer: s.p.Decline}
		}
		if q == nil && s.p.PasswordPrompt != nil && s.p.PasswordPrompt.MatchString(line) {
			q = &Question{Pattern: s.p.PasswordPrompt}
		}
		if q != nil {
			out := string(s.buf)
			s.buf = s.buf[:0]
			s.mu.Unlock()
			return out, q, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", nil, errors.New("the device closed the session")
			}
			return "", nil, fmt.Errorf("read: %w", err)
		}
		select {
		case <-s.note:
		case <-s.done:
		case <-timer.C:
			return "", nil, fmt.Errorf("%w after %s (last line %q)", ErrTimeout, timeout, line)
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
	}
}

// Send sends one command and waits for the next prompt. It returns the
// reply without the echoed command and the prompt. A reply that the
// platform marks as an error, or a confirmation question (declined), gives
// a *DeviceError; any other error is a transport error (or ErrTimeout), after
// which the session should be closed.
func (s *Session) Send(ctx context.Context, cmd string) (string, error) {
	if s.o.Transcript != nil {
		fmt.Fprintf(s.o.Transcript, "\n<<< %s\n", cmd)
	}
	if err := s.write(cmd); err != nil {
		return "", err
	}
	out, q, err := s.readPrompt(ctx, s.o.timeout(), false)
	if err != nil {
		return "", fmt.Errorf("%q: %w", cmd, err)
	}
	if q != nil {
		// A question we never answer yes to (confirmation) or cannot
		// answer here (password): decline and wait for the prompt.
		answer := s.p.Decline
		if q.Pattern == s.p.Confirm {
			answer = q.Answer
		}
		if err := s.write(answer); err != nil {
			return "", err
		}
		rest, _, err := s.readPrompt(ctx, s.o.timeout(), false)
		if err != nil {
			return "", fmt.Errorf("%q: %w", cmd, err)
		}
		reply := clean(out+rest, cmd)
		_, question := lastLine([]byte(out))
		return reply, &DeviceError{Command: cmd, Output: reply,
			Message: "asked " + strings.TrimSpace(question) + " and rdggen declined (use the command's force form)"}
	}
	reply := clean(out, cmd)
	if msg := s.deviceMessage(reply); msg != "" {
		return reply, &DeviceError{Command: cmd, Message: msg, Output: reply}
	}
	return reply, nil
}

// deviceMessage returns the first error line and the lines after it.
func (s *Session) deviceMessage(reply string) string {
	if s.p.ErrorLine == nil {
		return ""
	}
	lines := strings.Split(reply, "\n")
	for i, l := range lines {
		if s.p.ErrorLine.MatchString(l) {
			var msg []string
			for _, m := range lines[i:] {
				if m = strings.TrimSpace(m); m != "" {
					msg = append(msg, m)
				}
			}
			return strings.Join(msg, " ")
		}
	}
	return ""
}

// clean turns raw reply text into lines: CRLF to LF, each line as the
// terminal shows it (text after its last carriage return), the echoed
// command dropped, trailing blank lines removed.
func clean(out, cmd string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if k := strings.LastIndexByte(l, '\r'); k >= 0 {
			l = l[k+1:]
		}
		lines[i] = l
	}
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == strings.TrimSpace(cmd) {
		lines = lines[1:]
	} else if len(lines) > 0 && strings.HasSuffix(strings.TrimSpace(lines[0]), strings.TrimSpace(cmd)) && cmd != "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// Acquire moves the session to the named level, going down with each
// level's Down command and up with Up (answering a password question with
// Options.EnableSecret). It fails if the level is unknown or unreachable.
func (s *Session) Acquire(ctx context.Context, name string) error {
	target := s.find(name)
	if target == nil {
		return fmt.Errorf("%s has no level %q", s.p.Name, name)
	}
	for step := 0; step < 2*len(s.p.Levels)+2; step++ {
		if s.level == name {
			return nil
		}
		cur := s.find(s.level)
		if cur == nil {
			return fmt.Errorf("unknown prompt %q", s.prompt)
		}
		var cmd string
		if s.isAncestor(cur.Name, name) {
			// Go up one level along the path to target.
			next := target
			for next.Parent != cur.Name {
				next = s.find(next.Parent)
			}
			if next.Up == "" {
				return fmt.Errorf("%s: level %q cannot be entered", s.p.Name, next.Name)
			}
			cmd = next.Up
		} else {
			if cur.Down == "" {
				return fmt.Errorf("%s: no way down from level %q", s.p.Name, cur.Name)
			}
			cmd = cur.Down
		}
		if err := s.escalate(ctx, cmd); err != nil {
			return err
		}
	}
	return fmt.Errorf("could not reach level %q (prompt %q)", name, s.prompt)
}

// escalate sends a level-changing command, answering a password question.
func (s *Session) escalate(ctx context.Context, cmd string) error {
	if s.o.Transcript != nil {
		fmt.Fprintf(s.o.Transcript, "\n<<< %s\n", cmd)
	}
	if err := s.write(cmd); err != nil {
		return err
	}
	out, q, err := s.readPrompt(ctx, s.o.timeout(), false)
	if err != nil {
		return fmt.Errorf("%q: %w", cmd, err)
	}
	if q != nil {
		if q.Pattern != s.p.PasswordPrompt || s.o.EnableSecret == "" {
			_ = s.write(s.p.Decline)
			_, _, _ = s.readPrompt(ctx, s.o.timeout(), false)
			return &DeviceError{Command: cmd, Message: "asked for a password and none is configured"}
		}
		if _, err := io.WriteString(s.w, s.o.EnableSecret+s.p.Return); err != nil {
			return err
		}
		if out, _, err = s.readPrompt(ctx, s.o.timeout(), false); err != nil {
			return fmt.Errorf("%q: %w", cmd, err)
		}
	}
	reply := clean(out, cmd)
	if msg := s.deviceMessage(reply); msg != "" {
		return &DeviceError{Command: cmd, Message: msg, Output: reply}
	}
	return nil
}

func (s *Session) find(name string) *Level {
	for i := range s.p.Levels {
		if s.p.Levels[i].Name == name {
			return &s.p.Levels[i]
		}
	}
	return nil
}

// isAncestor reports whether level a lies below level b.
func (s *Session) isAncestor(a, b string) bool {
	for l := s.find(b); l != nil && l.Parent != ""; l = s.find(l.Parent) {
		if l.Parent == a {
			return true
		}
	}
	return false
}
