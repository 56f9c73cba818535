package assoc

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// modelJSON is a Model's stored form: every list in a fixed order, so the
// same model always encodes to the same bytes.
type modelJSON struct {
	NextQOSID    uint32        `json:"next_qos_id"`
	NextAssocID  uint32        `json:"next_assoc_id"`
	QOS          []QOS         `json:"qos"`
	Accounts     []Account     `json:"accounts"`
	Users        []User        `json:"users"`
	Associations []Association `json:"associations"`
}

// MarshalJSON encodes the model deterministically: QOS and associations
// by id, accounts and users by name, with the next ids to hand out.
func (m *Model) MarshalJSON() ([]byte, error) {
	assocs := make([]Association, 0, len(m.assocs))
	for _, a := range m.assocs {
		assocs = append(assocs, a)
	}
	slices.SortFunc(assocs, func(a, b Association) int { return cmp.Compare(a.ID, b.ID) })
	return json.Marshal(modelJSON{
		NextQOSID:    m.nextQOSID,
		NextAssocID:  m.nextAssocID,
		QOS:          m.QOSList(),
		Accounts:     m.Accounts(),
		Users:        m.Users(),
		Associations: assocs,
	})
}

// UnmarshalJSON restores a model MarshalJSON wrote. The records go
// through the checks Apply makes, so a model restored is as sound as one
// Apply returned.
func (m *Model) UnmarshalJSON(b []byte) error {
	var in modelJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	n := empty()
	var maxQOS, maxAssoc uint32
	qosIDs := map[uint32]bool{}
	for _, q := range in.QOS {
		id := q.ID
		q, err := normQOS(q)
		if err != nil {
			return fmt.Errorf("accounting model: %w", err)
		}
		if _, dup := n.qos[q.Name]; dup || id == 0 || qosIDs[id] {
			return fmt.Errorf("accounting model: qos %s: duplicate name or bad id %d", q.Name, id)
		}
		qosIDs[id] = true
		q.ID = id
		n.qos[q.Name] = q
		maxQOS = max(maxQOS, id)
	}
	for _, a := range in.Accounts {
		if _, dup := n.accounts[a.Name]; dup {
			return fmt.Errorf("accounting model: duplicate account %s", a.Name)
		}
		if err := n.putAccount(a); err != nil {
			return fmt.Errorf("accounting model: %w", err)
		}
	}
	for _, u := range in.Users {
		if _, dup := n.users[u.Name]; dup {
			return fmt.Errorf("accounting model: duplicate user %s", u.Name)
		}
		if err := n.putUser(u); err != nil {
			return fmt.Errorf("accounting model: %w", err)
		}
	}
	assocIDs := map[uint32]bool{}
	for _, a := range in.Associations {
		id := a.ID
		a, err := normAssoc(a, nil)
		if err != nil {
			return fmt.Errorf("accounting model: %w", err)
		}
		if _, dup := n.assocs[keyOf(a)]; dup || id == 0 || assocIDs[id] {
			return fmt.Errorf("accounting model: %s: duplicate association or bad id %d", a, id)
		}
		assocIDs[id] = true
		a.ID = id
		n.assocs[keyOf(a)] = a
		maxAssoc = max(maxAssoc, id)
	}
	n.nextQOSID = max(in.NextQOSID, maxQOS+1)
	n.nextAssocID = max(in.NextAssocID, maxAssoc+1)
	if err := n.check(nil); err != nil {
		return fmt.Errorf("accounting model: %w", err)
	}
	n.derive()
	*m = *n
	return nil
}
