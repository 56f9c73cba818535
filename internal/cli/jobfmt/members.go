package jobfmt

import "slices"

// Record members that readmodel.FromV0044Job reads for the values of the fields below.
// A command that prints only fields listed here can ask the controller
// for these members alone (fieldsel), and a whole record prints the same.
var (
	// IDMembers identify a record: a job, an array task or meta-record, a
	// heterogeneous component. Every listing needs them.
	IDMembers = []string{"job_id", "array_job_id", "array_task_id", "array_task_string", "het_job_id", "het_job_offset"}
	// timeUsedMembers are what TimeUsed reads.
	timeUsedMembers = []string{"job_state", "start_time", "end_time", "suspend_time", "pre_sus_time"}
	reasonMembers   = []string{"state_reason", "state_description"}
)

// fieldMembers maps a Field's Name to the members its value reads. Fields
// without an entry need the whole record.
var fieldMembers = map[string][]string{
	"Account":       {"account"},
	"ArrayJobId":    IDMembers,
	"ArrayTaskId":   IDMembers,
	"BatchHost":     {"batch_host", "allocating_node", "batch_flag"},
	"Command":       {"command"},
	"Comment":       {"comment"},
	"CPUsPerTask":   {"cpus_per_task"},
	"cpus-per-task": {"cpus_per_task"},
	"Dependency":    {"dependency"},
	"EndTime":       {"end_time", "time_limit"},
	"Gres":          {"tres_per_node"},
	"tres-per-node": {"tres_per_node"},
	"GroupId":       {"group_id"},
	"GroupName":     {"group_name", "group_id"},
	"JobArrayId":    IDMembers,
	"JobId":         {"job_id"},
	"MinCPUs":       {"minimum_cpus_per_node"},
	"MinMemory":     {"memory_per_node", "memory_per_cpu"},
	"Name":          {"name"},
	"NodeList":      {"nodes"},
	"NumCPUs":       {"cpus"},
	"NumNodes":      {"node_count"},
	"NumTasks":      {"tasks"},
	"OverSubscribe": {"shared"},
	"Shared":        {"shared"},
	"Partition":     {"partition"},
	"Priority":      {"priority"},
	"PriorityLong":  {"priority"},
	"QOS":           {"qos"},
	"Reason":        reasonMembers,
	"ReasonList":    append([]string{"nodes"}, append(reasonMembers, "job_state")...),
	"ReqNodes":      {"required_nodes"},
	"Reservation":   {"resv_name"},
	"StartTime":     {"start_time"},
	"State":         {"job_state"},
	"StateCompact":  {"job_state"},
	"SubmitTime":    {"submit_time"},
	"TimeLeft":      append([]string{"time_limit"}, timeUsedMembers...),
	"TimeLimit":     {"time_limit"},
	"TimeUsed":      timeUsedMembers,
	"UserId":        {"user_id"},
	"UserName":      {"user_name", "user_id"},
	"WorkDir":       {"current_working_directory"},
}

// Members returns the record members that f's fields read, and false when
// one of them needs the whole record.
func (f *Format) Members() ([]string, bool) {
	var out []string
	for _, c := range f.Columns {
		if c.Field == nil {
			continue
		}
		m, ok := fieldMembers[c.Field.Name]
		if !ok {
			return nil, false
		}
		out = append(out, m...)
	}
	return out, true
}

// LetterMembers returns the members read by the field with -o letter c,
// and false when it needs the whole record or there is no such letter.
func LetterMembers(c byte) ([]string, bool) {
	i := slices.IndexFunc(fields, func(f Field) bool { return f.Letter == c })
	if i < 0 {
		return nil, false
	}
	m, ok := fieldMembers[fields[i].Name]
	return m, ok
}
