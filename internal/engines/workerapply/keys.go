package workerapply

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/crypto/ssh"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/ownfs"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/horovod"
)

// The cluster's worker keys are kept on the machine that runs rdggen, in a
// directory the user chooses (--keys; DefaultKeyDir otherwise): generated once,
// then the same on every run, so that a second apply changes nothing.
const (
	// ClientKeyFile is the cluster's MPI key pair (id_ed25519 in the workers).
	ClientKeyFile = "mpi_ed25519"
	// HostKeyFile is the workers' shared sshd host key.
	HostKeyFile = "worker_host_ed25519"
)

// DefaultKeyDir is $XDG_CONFIG_HOME/rdggen/<cluster>, or
// ~/.config/rdggen/<cluster> when XDG_CONFIG_HOME is unset.
func DefaultKeyDir(cluster string, getenv func(string) string) (string, error) {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("no home directory for the worker keys (set --keys): %w", err)
			}
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "rdggen", cluster), nil
}

// KeyError is a problem with the key directory; nothing was pushed.
type KeyError struct {
	Path string
	Msg  string
}

func (e *KeyError) Error() string { return e.Path + ": " + e.Msg }

// LoadKeys reads the worker keys from dir. found is false when neither
// private key exists (and then err is nil even when dir does not exist:
// CanSaveKeys says whether they can be made there). It fails when only one
// exists, when a file is not an unencrypted OpenSSH ed25519 key, and when
// someone other than the user running rdggen could have chosen the keys:
// the rules of TrustedPath for dir and everything above it, and for each
// private key a regular file (not a symbolic link), owned by that user or
// root, readable by its owner only (as ssh refuses such keys). Public keys
// are derived from the private ones; the .pub files are for people.
func LoadKeys(dir string) (k horovod.WorkerKeys, found bool, err error) {
	var have []string
	for _, name := range []string{ClientKeyFile, HostKeyFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			have = append(have, name)
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return k, false, &KeyError{filepath.Join(dir, name), err.Error()}
		}
	}
	if len(have) == 0 {
		return k, false, nil
	}
	if err := TrustedPath(dir); err != nil {
		return k, false, err
	}
	if len(have) == 1 {
		return k, false, &KeyError{dir, fmt.Sprintf("holds %s but not the other worker key; move the directory away to generate both again", have[0])}
	}
	if k.ClientPrivate, k.ClientPublic, err = readKey(filepath.Join(dir, ClientKeyFile)); err != nil {
		return k, false, err
	}
	if k.HostPrivate, k.HostPublic, err = readKey(filepath.Join(dir, HostKeyFile)); err != nil {
		return k, false, err
	}
	return k, true, nil
}

func readKey(path string) (private, public []byte, err error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, &KeyError{path, err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &KeyError{path, "is not a regular file (a private key must not be a symbolic link or a device)"}
	}
	if err := trustedOwner(path, fi); err != nil {
		return nil, nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, nil, &KeyError{path, fmt.Sprintf("permissions %04o are too open: a private key must be readable by its owner only (chmod 600)", fi.Mode().Perm())}
	}
	b, err := userfile.Read(path, userfile.Limit)
	if err != nil {
		return nil, nil, &KeyError{path, err.Error()}
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		return nil, nil, &KeyError{path, "not an unencrypted OpenSSH private key: " + err.Error()}
	}
	if t := signer.PublicKey().Type(); t != ssh.KeyAlgoED25519 {
		return nil, nil, &KeyError{path, "is a " + t + " key, not ed25519"}
	}
	return b, bytes.TrimSpace(ssh.MarshalAuthorizedKey(signer.PublicKey())), nil
}

// TrustedPath applies OpenSSH's rules for files that decide who may log in
// (sshd's StrictModes, auth.c auth_secure_path; ssh's checks of its own
// configuration and keys, sshd_config(5), ssh(1) FILES) to the directory
// dir: with symbolic links resolved, dir and every directory above it up
// to / must be owned by the user running rdggen or by root, and writable
// by no one else (no group or other write bit). Otherwise whoever can
// write there could put their own MPI key or workers' host key in place.
// One difference from sshd: a directory above dir (not dir itself) may be
// writable by others when its sticky bit is set, as /tmp is (1777): there
// no one but the owner of an entry (or of the directory) can rename or
// remove it (chmod(1), "restricted deletion flag"), so dir cannot be
// swapped. The error is a *KeyError naming the path and the rule.
func TrustedPath(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return &KeyError{dir, err.Error()}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return &KeyError{dir, err.Error()}
	}
	return trustedChain(real, dir, dir, true)
}

// trustedChain checks path (symbolic links resolved) and every directory
// above it; own says that path is the key directory itself (no sticky
// exemption). named is how the user named path and keyDir the key
// directory, for the messages.
func trustedChain(path, named, keyDir string, own bool) error {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return &KeyError{p, err.Error()}
		}
		if !fi.IsDir() {
			return &KeyError{p, "is not a directory"}
		}
		where := p
		if p == path && filepath.Clean(named) != p {
			where = fmt.Sprintf("%s (%s)", named, p)
		}
		if err := trustedOwner(where, fi); err != nil {
			return err
		}
		writable := fi.Mode().Perm()&0o022 != 0
		sticky := fi.Mode()&fs.ModeSticky != 0
		switch {
		case writable && p == path && own:
			return &KeyError{where, fmt.Sprintf("is writable by %s (mode %s): whoever can write there can put their own MPI key or workers' host key in place, so rdggen refuses it as sshd refuses such a path (StrictModes); chmod go-w %s, or choose another --keys",
				writers(fi.Mode()), modeString(fi.Mode()), p)}
		case writable && !sticky:
			return &KeyError{where, fmt.Sprintf("is writable by %s (mode %s), and it is above the worker key directory %s: whoever can write there can replace that directory, so rdggen refuses it as sshd refuses such a path (StrictModes); chmod go-w %s, or choose another --keys",
				writers(fi.Mode()), modeString(fi.Mode()), keyDir, p)}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// trustedOwner refuses a file or directory owned by anyone but the user
// running rdggen (its effective uid) or root.
func trustedOwner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := os.Geteuid()
	if int(st.Uid) == me || st.Uid == 0 {
		return nil
	}
	return &KeyError{path, fmt.Sprintf("is owned by %s, not by you (%s) or root: its owner can choose the cluster's MPI key and workers' host key, so rdggen refuses it as ssh and sshd refuse such files (StrictModes); chown it, or choose another --keys",
		userName(int(st.Uid)), userName(me))}
}

// userName is "uid N (name)", or "uid N" when the name is unknown.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// writers says who may write by a mode's group and other bits.
func writers(m fs.FileMode) string {
	switch g, o := m&0o020 != 0, m&0o002 != 0; {
	case g && o:
		return "its group and everyone"
	case g:
		return "its group"
	}
	return "everyone"
}

// modeString is a mode in octal with its special bits, e.g. 1777.
func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", ownfs.Octal(m)) }

// CanSaveKeys reports whether SaveKeys can make the keys in dir: dir, or
// the nearest directory above it that exists (where SaveKeys creates the
// missing ones), is a directory that the user running rdggen can write
// into (access(2) W_OK: also false on a read-only file system) and that
// passes TrustedPath's rules. A dry run calls it before it promises the
// keys.
func CanSaveKeys(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return &KeyError{dir, err.Error()}
	}
	p := abs
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return &KeyError{p, fmt.Sprintf("is not a directory, so the worker keys cannot be made in %s", dir)}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return &KeyError{p, err.Error()}
		}
		p = filepath.Dir(p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return &KeyError{p, err.Error()}
	}
	if err := trustedChain(real, p, dir, p == abs); err != nil {
		return err
	}
	if err := syscall.Access(real, 0o2|0o1); err != nil { // W_OK|X_OK
		what := "the worker keys"
		if p != abs {
			what = "the directory " + dir
		}
		return &KeyError{p, fmt.Sprintf("cannot be written (%v), so %s cannot be made there; choose another --keys", err, what)}
	}
	return nil
}

// SaveKeys writes new keys into dir (created 0700): each private key 0600,
// its .pub 0644, each a new file (atomicfile.Create). It never replaces an
// existing file, and it refuses a dir
// that TrustedPath refuses (one that someone else created meanwhile).
func SaveKeys(dir string, k horovod.WorkerKeys) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &KeyError{dir, err.Error()}
	}
	// Whoever made dir first owns it: check it now that it exists.
	if err := TrustedPath(dir); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		mode fs.FileMode
		data []byte
	}{
		{ClientKeyFile, 0o600, k.ClientPrivate},
		{ClientKeyFile + ".pub", 0o644, append(bytes.TrimSpace(k.ClientPublic), '\n')},
		{HostKeyFile, 0o600, k.HostPrivate},
		{HostKeyFile + ".pub", 0o644, append(bytes.TrimSpace(k.HostPublic), '\n')},
	} {
		p := filepath.Join(dir, f.name)
		if err := atomicfile.Create(p, f.data, f.mode); err != nil {
			return &KeyError{p, err.Error()}
		}
	}
	return nil
}

// Fingerprint is the SHA256 fingerprint of an authorized_keys-form public
// key, as ssh-keygen -l prints it ("SHA256:…"), or "?" when it does not parse.
func Fingerprint(public []byte) string {
	pk, _, _, _, err := ssh.ParseAuthorizedKey(public)
	if err != nil {
		return "?"
	}
	return ssh.FingerprintSHA256(pk)
}
