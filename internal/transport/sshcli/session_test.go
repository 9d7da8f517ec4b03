package sshcli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// fake is a scripted device on pipes: it prints greeting, then for each line
// it receives it echoes the line and writes reply(line).
type fake struct {
	sent []string
	keys chan byte // bytes read outside of lines (pager answers)
}

func startFake(t *testing.T, greeting string, reply func(f *fake, line string, w io.Writer)) (*Session, *fake) {
	t.Helper()
	cr, cw := io.Pipe() // client → device
	dr, dw := io.Pipe() // device → client
	f := &fake{keys: make(chan byte, 16)}
	go func() {
		io.WriteString(dw, greeting)
		br := bufio.NewReader(cr)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				dw.Close()
				return
			}
			line = strings.TrimRight(line, "\n")
			f.sent = append(f.sent, line)
			io.WriteString(dw, line+"\r\n")
			reply(f, line, dw)
		}
	}()
	t.Cleanup(func() { cw.Close(); dr.Close() })
	s := New(cw, dr, ONYX, Options{CommandTimeout: 2 * time.Second})
	return s, f
}

const (
	pExec   = "swx-mld-1-2 [standalone: master] > "
	pEnable = "swx-mld-1-2 [standalone: master] # "
	pConfig = "swx-mld-1-2 [standalone: master] (config) # "
)

func TestPromptLevels(t *testing.T) {
	cases := map[string]string{
		pExec:   Exec,
		pEnable: Enable,
		pConfig: Config,
		"switch-f66e1c [standalone: master] (config interface ethernet 1/19) # ": ConfigSub,
		"sw-spine-001 [mlag-domain: standby] (config) # ":                        Config,
		"sw-spine-002 [standalone: master] #":                                    Enable,
		"sw-spine-001(config)#":                                                  Config,
	}
	for prompt, want := range cases {
		var got []string
		for _, l := range ONYX.Levels {
			if l.Prompt.MatchString(prompt) {
				got = append(got, l.Name)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q matches %v, want only %s", prompt, got, want)
		}
	}
	for _, notPrompt := range []string{"# ldap bind-password ********", "   interface ethernet 1/1 qos trust L3", "#", "##"} {
		for _, l := range ONYX.Levels {
			if l.Prompt.MatchString(notPrompt) {
				t.Errorf("output line %q taken for a %s prompt", notPrompt, l.Name)
			}
		}
	}
}

// onyxLike answers like an ONYX CLI for the commands these tests use.
func onyxLike(f *fake, line string, w io.Writer) {
	switch line {
	case "no cli session paging enable":
		io.WriteString(w, pExec)
	case "enable":
		io.WriteString(w, pEnable)
	case "configure terminal":
		io.WriteString(w, pConfig)
	case "exit":
		io.WriteString(w, pEnable)
	case "disable":
		io.WriteString(w, pExec)
	case "bogus":
		io.WriteString(w, "% Unrecognized command \"bogus\".\r\nType \"?\" for help.\r\n"+pConfig)
	case "interface ethernet 1/1 mtu 9216":
		io.WriteString(w, "Changing the MTU will toggle the interface.\r\nType 'yes' to confirm: ")
	case "no":
		io.WriteString(w, "\r\n"+pConfig)
	case "show colors":
		io.WriteString(w, "\x1b[1mbold\x1b[0m and x\x08plain\r\n"+pConfig)
	default:
		io.WriteString(w, pConfig)
	}
}

func TestSessionLevelsAndErrors(t *testing.T) {
	s, f := startFake(t, "\r\nNVIDIA Onyx Switch Management\r\n\r\n"+pExec, onyxLike)
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Level() != Exec {
		t.Fatalf("level %q after login", s.Level())
	}
	if err := s.Acquire(ctx, Config); err != nil {
		t.Fatal(err)
	}
	if s.Level() != Config || s.Prompt() != pConfig {
		t.Fatalf("level %q prompt %q", s.Level(), s.Prompt())
	}
	want := []string{"no cli session paging enable", "enable", "configure terminal"}
	if strings.Join(f.sent, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", f.sent, want)
	}

	_, err := s.Send(ctx, "bogus")
	var de *DeviceError
	if !errors.As(err, &de) || de.Message != `% Unrecognized command "bogus". Type "?" for help.` || de.Command != "bogus" {
		t.Fatalf("err = %#v", err)
	}
	// A confirmation is declined and reported as a device error.
	_, err = s.Send(ctx, "interface ethernet 1/1 mtu 9216")
	if !errors.As(err, &de) || !strings.Contains(de.Message, "Type 'yes' to confirm:") || f.sent[len(f.sent)-1] != "no" {
		t.Fatalf("confirmation: err = %v, sent %q", err, f.sent)
	}
	out, err := s.Send(ctx, "show colors")
	if err != nil || out != "bold and plain" {
		t.Errorf("escapes: %q, %v", out, err)
	}
	if err := s.Acquire(ctx, Exec); err != nil || s.Level() != Exec {
		t.Fatalf("down to exec: %v, level %q", err, s.Level())
	}
}

func TestTimeoutIsTransportError(t *testing.T) {
	s, _ := startFake(t, pConfig, func(f *fake, line string, w io.Writer) {})
	s.o.CommandTimeout = 100 * time.Millisecond
	p := *ONYX
	p.OnOpen = nil
	s.p = &p
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := s.Send(context.Background(), "hang")
	var de *DeviceError
	if !errors.Is(err, ErrTimeout) || errors.As(err, &de) {
		t.Errorf("err = %v, want a timeout and no device error", err)
	}
}

func TestLoginWizardDeclined(t *testing.T) {
	s, f := startFake(t, "Do you want to use the wizard for initial configuration? ", func(f *fake, line string, w io.Writer) {
		if line == "n" {
			io.WriteString(w, pExec)
			return
		}
		io.WriteString(w, pExec)
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.sent) < 1 || f.sent[0] != "n" {
		t.Errorf("sent %q", f.sent)
	}
}

func TestCleaner(t *testing.T) {
	var c cleaner
	var out []byte
	for _, chunk := range []string{"a\x1b[", "1;3", "1mb\x1b", "[0mc", "xy\x08\x08z\x07"} {
		out = c.feed(out, []byte(chunk))
	}
	if string(out) != "abcz" {
		t.Errorf("got %q", out)
	}
}
