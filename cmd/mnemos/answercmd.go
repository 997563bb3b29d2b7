package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mnemos-dev/mnemos/approvals"
	"github.com/mnemos-dev/mnemos/gate"
	"github.com/mnemos-dev/mnemos/policy"
)

// AnswerCmd is mnemos approvals answer: what a channel bridge (a bot)
// runs with the data of the button a person pressed, as seed 002's
// callback dispatcher does.
type AnswerCmd struct {
	Data string `arg:"" help:"The button's data: approve:TOKEN or reject:TOKEN."`
	JSON bool   `name:"json" help:"Print one JSON object."`
}

// answerResult is what answer prints with --json.
type answerResult struct {
	OK              bool   `json:"ok"`
	Decision        string `json:"decision"`
	Token           string `json:"token"`
	CapabilityClass string `json:"capability_class"`
	Confirmation    string `json:"confirmation"`
}

const answerHint = "the data is a card button's: approve:TOKEN or reject:TOKEN"

// Run resolves the request the data names, for the identity given with
// --channel and --sender (only that requester's requests), as the person's
// bridge (bridge:SENDER): an approval never comes from the requester's
// own identity.
func (c *AnswerCmd) Run(a *app) error {
	data := strings.TrimSpace(c.Data)
	verb, token, found := strings.Cut(data, ":")
	switch {
	case !found || verb != "approve" && verb != "reject":
		return &exitError{code: exitUsage, msg: fmt.Sprintf("unknown answer %q: want approve:TOKEN or reject:TOKEN", oneLine(data)), hint: answerHint}
	case strings.TrimSpace(token) == "":
		return &exitError{code: exitUsage, msg: fmt.Sprintf("missing token after %q", verb+":"), hint: answerHint}
	}
	d, token, err := approvals.ParseCallback(data)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error(), hint: answerHint}
	}
	if a.cli.Channel == "" || a.cli.Sender == "" {
		return &exitError{code: exitUsage, msg: "answer needs the identity of whoever pressed the button: --channel and --sender (or MNEMOS_CHANNEL and MNEMOS_SENDER)",
			hint: "mnemos approvals answer --channel CHANNEL --sender SENDER approve:TOKEN"}
	}
	g, err := a.gate()
	if err != nil {
		return err
	}
	by := a.identity()
	var (
		p     approvals.Pending
		label string
	)
	if d == approvals.Approve {
		// The bridge answers the requests of --channel and --sender, as the
		// person's bridge: never as that identity itself.
		res, err := g.Approve(a.ctx, token, by, gate.ApproveOptions{Via: approvals.Identity{Channel: approvals.ViaBridge, Sender: by.Sender}})
		if err != nil {
			return err
		}
		p, label = res.Pending, "approved"
	} else {
		if p, err = g.Deny(a.ctx, token, by); err != nil {
			return err
		}
		label = "rejected"
	}
	confirmation := fmt.Sprintf("%s: %s %s", label, oneLine(p.ActionVerb), oneLine(p.TargetSummary))
	if c.JSON {
		return writeJSON(a.io.out, answerResult{OK: true, Decision: label, Token: p.Token, CapabilityClass: p.CapabilityClass, Confirmation: confirmation})
	}
	fmt.Fprintln(a.io.out, confirmation)
	return nil
}

// digestGroup is one line of approvals list --digest.
type digestGroup struct {
	Channel    string            `json:"channel"`
	Sender     string            `json:"sender"`
	Capability string            `json:"capability"`
	Count      int               `json:"count"`
	Newest     approvals.Pending `json:"newest"`
}

// capabilityOf is the capability a request asks for, without its target:
// fs:write for fs:write:/home/u/proj/notes.txt.
func capabilityOf(p approvals.Pending) string {
	if len(p.Details.Accesses) > 0 {
		return string(p.Details.Accesses[0].Capability)
	}
	for _, s := range policy.Registry() {
		if c := string(s.Name); p.CapabilityClass == c || strings.HasPrefix(p.CapabilityClass, c+":") {
			return c
		}
	}
	return p.CapabilityClass
}

// digest groups requests (newest first) by channel, sender and
// capability; the groups come newest first.
func digest(list []approvals.Pending) []digestGroup {
	type key struct{ channel, sender, capability string }
	at := map[key]int{}
	var out []digestGroup
	for _, p := range list {
		k := key{p.Channel, p.Sender, capabilityOf(p)}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, digestGroup{Channel: k.channel, Sender: k.sender, Capability: k.capability, Newest: p})
		}
		out[i].Count++
		if p.CreatedAt.After(out[i].Newest.CreatedAt) {
			out[i].Newest = p
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Newest.CreatedAt.After(out[j].Newest.CreatedAt) })
	return out
}

// printDigest writes one line per group.
func printDigest(a *app, groups []digestGroup, now time.Time) {
	if len(groups) == 0 {
		fmt.Fprintln(a.io.out, "no pending requests")
		return
	}
	for _, gr := range groups {
		n := gr.Newest
		fmt.Fprintf(a.io.out, "%3d  %s:%s  %s  newest %s  %s  %s  %s\n", gr.Count, oneLine(gr.Channel), oneLine(gr.Sender), oneLine(gr.Capability),
			oneLine(n.Token), n.StatusAt(now), n.CreatedAt.Local().Format("2006-01-02 15:04:05"), oneLine(n.TargetSummary))
	}
}

// warnDeliveries reports on stderr the channels a new request's card did
// not reach; the request is pending all the same.
func warnDeliveries(a *app, d gate.Decision) {
	for _, dl := range d.Deliveries {
		if !dl.OK() {
			fmt.Fprintf(a.io.err, "mnemos: warning: channel %s: card not delivered: %s\n", dl.Channel, oneLine(dl.Err))
		}
	}
}
