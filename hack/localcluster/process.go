package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one long-running program of the local cluster, tracked by a pid file that also
// records the executable, so that `down` only ever signals a process this tool started.
type process struct {
	Name string
	Exe  string
	Args []string
	Env  []string // added to the environment
	// Runs is the executable the process ends up running when Exe execs another (default Exe).
	Runs string
}

func (l *layout) pidFile(name string) string { return filepath.Join(l.Run, name+".pid") }
func (l *layout) logFile(name string) string { return filepath.Join(l.Logs, name+".log") }

// start runs p in its own process group with output to its log file and records its pid.
func (l *layout) start(p process) error {
	logf, err := os.OpenFile(l.logFile(p.Name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = logf.Close() }()
	cmd := exec.Command(p.Exe, p.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", p.Name, err)
	}
	runs := p.Exe
	if p.Runs != "" {
		runs = p.Runs
	}
	record := fmt.Sprintf("%d\n%s\n", cmd.Process.Pid, runs)
	if err := os.WriteFile(l.pidFile(p.Name), []byte(record), 0o644); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// running returns the pid of the named process when its pid file names a live process that
// still runs the recorded executable.
func (l *layout) running(name string) (int, bool) {
	data, err := os.ReadFile(l.pidFile(name))
	if err != nil {
		return 0, false
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		return 0, false
	}
	pid, err := strconv.Atoi(lines[0])
	if err != nil || pid <= 1 {
		return 0, false
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || strings.TrimSuffix(exe, " (deleted)") != lines[1] {
		return 0, false
	}
	return pid, !isZombie(pid)
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// stop ends the named process: SIGTERM, then SIGKILL after grace. It is a no-op when the
// process is not running; the pid file is removed either way.
func (l *layout) stop(name string, grace time.Duration) error {
	defer func() { _ = os.Remove(l.pidFile(name)) }()
	pid, ok := l.running(name)
	if !ok {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s (pid %d): %w", name, pid, err)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if _, alive := l.running(name); !alive {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pid %d): %w", name, pid, err)
	}
	return nil
}

// exited is the error for a process that stopped while it should run, with its log's end.
func (l *layout) exited(name string) error {
	return fmt.Errorf("%s exited; last lines of %s:\n%s", name, l.logFile(name), l.tailLog(name))
}

// tailLog returns the last 15 lines of a process's log, for error messages.
func (l *layout) tailLog(name string) string {
	data, err := os.ReadFile(l.logFile(name))
	if err != nil {
		return ""
	}
	return lastLines(string(data), 15)
}

// startExtra starts an extra process (stopping a running one of the same name first): the
// managers `make demo` runs, OLM's operators, opm serving a catalog. `down` stops them first.
// With clusterDNS the process resolves names with the cluster's DNS (the real node's CoreDNS):
// it runs in a mount namespace of its own where /etc/resolv.conf is the cluster's, so it
// reaches Services by name (`<service>.<namespace>.svc`) and the host's resolver is untouched.
func startExtra(l *layout, name string, command []string, clusterDNS bool) error {
	if isComponent(name) {
		return fmt.Errorf("%s is a cluster component", name)
	}
	exe, err := exec.LookPath(command[0])
	if err != nil {
		return err
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil { // the pid file names what /proc/<pid>/exe shows
		return err
	}
	if err := l.stop(name, stopGracePeriod); err != nil {
		return err
	}
	for _, dir := range []string{l.Run, l.Logs} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	p := process{Name: name, Exe: exe, Args: command[1:]}
	if clusterDNS {
		if _, err := os.Stat(l.hostResolvConf()); err != nil {
			return fmt.Errorf("--cluster-dns needs the real node's DNS: %w", err)
		}
		argv := l.withClusterDNS(exe, command[1:])
		p = process{Name: name, Exe: argv[0], Runs: exe, Args: argv[1:]}
	}
	if err := l.start(p); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond) // a process that cannot start (flags, bind) exits at once
	if _, ok := l.running(name); !ok {
		return l.exited(name)
	}
	fmt.Printf("Started %s (log %s)\n", name, l.logFile(name))
	return nil
}
