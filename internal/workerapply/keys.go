package workerapply

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"

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
// private key exists. It fails when only one exists, when a private key is
// readable by anyone but its owner (as ssh refuses such keys), or when a file
// is not an unencrypted OpenSSH ed25519 key. Public keys are derived from the
// private ones; the .pub files are for people.
func LoadKeys(dir string) (k horovod.WorkerKeys, found bool, err error) {
	var have []string
	for _, name := range []string{ClientKeyFile, HostKeyFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			have = append(have, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return k, false, &KeyError{filepath.Join(dir, name), err.Error()}
		}
	}
	switch len(have) {
	case 0:
		return k, false, nil
	case 1:
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
		return nil, nil, &KeyError{path, "is not a regular file"}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, nil, &KeyError{path, fmt.Sprintf("permissions %04o are too open: a private key must be readable by its owner only (chmod 600)", fi.Mode().Perm())}
	}
	b, err := os.ReadFile(path)
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

// SaveKeys writes new keys into dir (created 0700): each private key 0600,
// its .pub 0644. It never replaces an existing file.
func SaveKeys(dir string, k horovod.WorkerKeys) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &KeyError{dir, err.Error()}
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
		fh, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return &KeyError{p, err.Error()}
		}
		_, err = fh.Write(f.data)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
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
