package pods

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// WaitReasons are the container waiting reasons that only a changed spec or a fixed image
// cure: the kubelet backs them off, the operators report them.
var WaitReasons = []string{
	"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
}

// Failure says why a container of pod cannot run, as "pod NAME: REASON" with the last exit code
// and the last line of its termination message (a crash: with TerminationMessagePolicy
// FallbackToLogsOnError, the last line it logged) or the kubelet's message; "" when every
// container runs or starts normally.
func Failure(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		w := cs.State.Waiting
		if w == nil || !slices.Contains(WaitReasons, w.Reason) {
			continue
		}
		msg := fmt.Sprintf("pod %s: %s", pod.Name, w.Reason)
		if t := cs.LastTerminationState.Terminated; t != nil {
			msg += fmt.Sprintf(" (last exit code %d after %d restarts)", t.ExitCode, cs.RestartCount)
			if last := lastLine(t.Message); last != "" {
				msg += ": " + last
			}
			return msg
		}
		if w.Message != "" {
			return msg + ": " + w.Message
		}
		return msg
	}
	return ""
}

// maxLineLength bounds the line of a termination message a Failure quotes.
const maxLineLength = 300

// lastLine is the last non-empty line of text, shortened to maxLineLength.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > maxLineLength {
		last = last[:maxLineLength] + "…"
	}
	return last
}

// maxListed bounds how many failures a FailureSummary names.
const maxListed = 3

// FailureSummary is a Degraded message for failures: the first few, and how many more.
func FailureSummary(failures []string) string {
	msg := strings.Join(failures[:min(len(failures), maxListed)], "; ")
	if more := len(failures) - maxListed; more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	return msg
}
