package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// mustBeInLabNetns refuses to go on unless this process runs in the lab namespace `netns`
// (/run/netns/<prefix>.<name>), which is not the host's (`hostInode`, the namespace `up` ran in,
// and PID 1's where it can be read): kube-proxy, started from here, then can only ever write
// rules inside a namespace the lab created.
func mustBeInLabNetns(netns, prefix string, hostInode uint64) error {
	if prefix == "" || !strings.HasPrefix(filepath.Base(netns), prefix+".") ||
		filepath.Dir(netns) != "/run/netns" {
		return fmt.Errorf("refusing to run: %q is not a lab namespace /run/netns/%s.*", netns, prefix)
	}
	self, err := inode("/proc/self/ns/net")
	if err != nil {
		return err
	}
	want, err := inode(netns)
	if err != nil {
		return err
	}
	init, err := inode("/proc/1/ns/net")
	if err != nil {
		init = 0 // another user namespace's PID 1: hostInode stands for it
	}
	if hostInode == 0 || self != want || self == hostInode || self == init {
		return fmt.Errorf("refusing to run: not inside %s (or that is the host's namespace)", netns)
	}
	return nil
}

func inode(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", path, err)
	}
	return st.Ino, nil
}

// nsPath is where a namespace of the lab lives.
func nsPath(name string) string { return "/run/netns/" + name }
