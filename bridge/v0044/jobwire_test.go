package v0044

import "testing"

func TestJobFieldIndexCoversRecord(t *testing.T) {
	w := jobTemplate()
	names := topLevelNames(&w)
	for _, n := range names {
		if _, ok := jobFieldIndex()[n]; !ok {
			t.Errorf("member %s has no field index", n)
		}
	}
	for _, m := range jobMembers {
		if _, ok := jobFieldIndex()[m.name]; !ok && m.name != "job_resources" {
			t.Errorf("setter for %s, which is no member of a job record", m.name)
		}
	}
	if len(jobFieldIndex()) != len(names) {
		t.Errorf("%d indexed members, template encodes %d", len(jobFieldIndex()), len(names))
	}
}
