package approvals

import (
	"strings"
	"testing"
)

// TestCardShowsCostEstimate: an access with an estimated cost puts it on
// the card's meta line, in every form.
func TestCardShowsCostEstimate(t *testing.T) {
	c := 0.1
	p := Pending{CapabilityClass: "llm:online:api.anthropic.com", ActionVerb: "call an online model",
		Details: Details{Accesses: []Access{{Capability: "llm:online", Target: "api.anthropic.com", Cost: &c}}}}
	for _, rec := range []int{0, MediumFrom, ShortFrom} {
		card := p.Card()
		card.Recurrence = rec
		if got := strings.Join(RenderCard(card), "\n"); !strings.Contains(got, "est. $0.1 a call") {
			t.Errorf("recurrence %d: no estimate in\n%s", rec, got)
		}
	}
	if got := strings.Join(RenderCard(Pending{}.Card()), "\n"); strings.Contains(got, "est.") {
		t.Errorf("an estimate without a cost:\n%s", got)
	}
}
