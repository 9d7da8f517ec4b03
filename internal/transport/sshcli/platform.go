package sshcli

import "regexp"

// Level names of the ONYX platform.
const (
	Exec      = "exec"       // `host [standalone: master] > `
	Enable    = "enable"     // `host [standalone: master] # `
	Config    = "config"     // `host [standalone: master] (config) # `
	ConfigSub = "config-sub" // `host [standalone: master] (config interface ethernet 1/1) # `
)

// Platform describes a network OS's interactive CLI as data (scrapligo's
// idea, docs/rules.md#cli-session): its privilege levels with their prompts,
// how to turn paging off, how the pager and device errors look. Nothing in
// Session is specific to one OS.
type Platform struct {
	// Name identifies the platform in messages, e.g. "nvidia_onyx".
	Name string
	// Levels are the privilege levels. A prompt belongs to the first level
	// whose Prompt matches it, so the patterns should be exclusive.
	Levels []Level
	// OnOpen are commands sent once after login, e.g. the paging switch.
	OnOpen []string
	// Pager matches a "more" prompt at the end of the output; the session
	// answers it with PagerAnswer and drops it from the output.
	Pager       *regexp.Regexp
	PagerAnswer string
	// ErrorLine matches a line of the reply that reports a device error
	// (the command was refused); the line and the ones after it are the
	// device's message.
	ErrorLine *regexp.Regexp
	// Confirm matches a question at the end of the output that waits for
	// an answer. Session never agrees: it answers Decline and reports the
	// command as a device error, since unattended pushes must use the
	// forms that do not ask.
	Confirm *regexp.Regexp
	Decline string
	// PasswordPrompt matches the secret question of an escalation (enable).
	PasswordPrompt *regexp.Regexp
	// LoginQuestions are questions the device may ask right after login,
	// with the answer to give.
	LoginQuestions []Question
	// Return ends each command line.
	Return string
}

// Level is one privilege level (mode) of the CLI.
type Level struct {
	// Name, e.g. "enable".
	Name string
	// Prompt matches the whole last line of the output when the CLI waits
	// at this level.
	Prompt *regexp.Regexp
	// Parent is the level below ("" for the lowest).
	Parent string
	// Up is the command that enters this level from Parent ("" when it
	// cannot be entered on purpose, e.g. an interface sub-mode).
	Up string
	// Down is the command that goes back to Parent.
	Down string
}

// Question is a prompt the device may ask and the answer to send.
type Question struct {
	Pattern *regexp.Regexp
	Answer  string
}

// onyxHost is the prompt's head: the hostname, then the optional
// `[<standalone|mlag-domain>: master|standby]` segment (docs/rules.md#cli-session;
// aesthetics §3's ONYX definition, which matches each real prompt form once).
const onyxHost = `^[\w.\-]{1,63}( \[[^\]]+\])? ?`

// ONYX is the NVIDIA/Mellanox ONYX (MLNX-OS) CLI (docs/rules.md#cli-session, §5,
// §7): prompts `> `, `# ` and `(config…) # `; `enable` and `configure
// terminal` to go up, `disable`/`exit` to go down; paging off with `no cli
// session paging enable` (Ansible, netmiko, oxidized), else the pager
// `lines 1-23 ` / `lines 24-40/40 (END) ` answered with a space (oxidized);
// errors are lines starting with `%` (Ansible's terminal plugin); the
// first-login wizard question is declined with `n`.
var ONYX = &Platform{
	Name: "nvidia_onyx",
	Levels: []Level{
		{Name: Exec, Prompt: regexp.MustCompile(onyxHost + `> ?$`)},
		{Name: Enable, Prompt: regexp.MustCompile(onyxHost + `# ?$`), Parent: Exec, Up: "enable", Down: "disable"},
		{Name: Config, Prompt: regexp.MustCompile(onyxHost + `\(config\) ?# ?$`), Parent: Enable, Up: "configure terminal", Down: "exit"},
		{Name: ConfigSub, Prompt: regexp.MustCompile(onyxHost + `\(config [^)]*\) ?# ?$`), Parent: Config, Down: "exit"},
	},
	OnOpen:      []string{"no cli session paging enable"},
	Pager:       regexp.MustCompile(`lines \d+-\d+(/\d+)?( \(END\))? ?$`),
	PagerAnswer: " ",
	ErrorLine:   regexp.MustCompile(`^%`),
	// `Type 'YES' to confirm split:` (module-type without force) and the
	// usual yes/no forms (docs/rules.md#cli-session); inferred beyond those.
	Confirm:        regexp.MustCompile(`(?i)(\[yes/no\]|\(yes/no\)|\[y/n\]|\(y/n\)|type '?yes'? to confirm[^\n]*:) ?$`),
	Decline:        "no",
	PasswordPrompt: regexp.MustCompile(`(?i)password: ?$`),
	LoginQuestions: []Question{
		{Pattern: regexp.MustCompile(`(?i)use the wizard for initial configuration\? ?(\[[^\]]*\])? ?$`), Answer: "n"},
	},
	Return: "\n",
}
