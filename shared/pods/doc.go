// Package pods is what every Quintet operator knows of the pods it makes: whether one is
// Ready, why its container cannot run for a reason only a changed spec or a fixed image cures
// (a crash loop, an image that cannot be pulled, a missing Secret), in the words operators put
// in their Degraded conditions, the security contexts of the restricted Pod Security level
// that every pod they make meets, and how much of a pod's spec a manager's cache keeps.
package pods
