// Package slurmerr carries Slurm's error numbers and their fixed messages,
// so that a REST error envelope and a shim's "sbatch: error: ..." line come
// from the same value (slurm_errno.h numbering, slurm_strerror wording).
package slurmerr

import (
	"errors"
	"fmt"
)

// Code is a Slurm error number.
type Code int32

// Error numbers used by Drover, with Slurm's values.
const (
	NoError                        Code = 0
	Unspecified                    Code = 1
	ControllerConnect              Code = 1800
	InvalidPartitionName           Code = 2000
	DefaultPartitionNotSet         Code = 2001
	AccessDenied                   Code = 2002
	RequestedNodesNotInPartition   Code = 2004
	TooManyRequestedCPUs           Code = 2005
	InvalidNodeCount               Code = 2006
	JobScriptMissing               Code = 2009
	RequestedNodeConfigUnavailable Code = 2014
	RequestedPartConfigUnavailable Code = 2015
	NodesBusy                      Code = 2016
	InvalidJobID                   Code = 2017
	InvalidNodeName                Code = 2018
	TransitionStateNoUpdate        Code = 2020
	AlreadyDone                    Code = 2021
	AccountingPolicy               Code = 2050
	InvalidTimeLimit               Code = 2051
	NotSupported                   Code = 2036
	Disabled                       Code = 2037
	InvalidTimeValue               Code = 2054
	ReservationAccess              Code = 2052
	ReservationInvalid             Code = 2053
	ReservationNotUsable           Code = 2056
	ReservationOverlap             Code = 2058
	JobHeld                        Code = 2042
	InvalidGRES                    Code = 2072
	InvalidArray                   Code = 2081
	InvalidDependency              Code = 2038
	JobNotPending                  Code = 2073
	PartitionInUse                 Code = 2075
	JobPending                     Code = 2024
	BatchOnly                      Code = 2039
	EnvironmentMissing             Code = 2127
	InStandbyUseBackup             Code = 2131
	SocketTimeout                  Code = 5004
	InvalidNodeState               Code = 2028
	InvalidTaskMemory              Code = 2044
	InvalidAccount                 Code = 2045
	InvalidParentAccount           Code = 2046
	SameParentAccount              Code = 2047
	InvalidQOS                     Code = 2066
	QOSPreemptionLoop              Code = 2067
	InvalidAssoc                   Code = 2167
	NodeAlreadyExists              Code = 2168
	NodeTableFull                  Code = 2169
	InvalidQuery                   Code = 9000
	JobsRunningOnAssoc             Code = 7001
	NoRemoveDefaultAccount         Code = 7009
	NoRemoveDefaultQOS             Code = 7011
	DataConvFailed                 Code = 9202
	NoChangeInData                 Code = 1900
	AuthCredInvalid                Code = 6000
	AuthExpired                    Code = 6001
	TokenGenerationFailed          Code = 6009
	PluginNotLoaded                Code = 8004
	UserIDMissing                  Code = 2010
	DataAmbiguousModify            Code = 9210
	DataAmbiguousQuery             Code = 9211
	NotHetJob                      Code = 2106
	NotHetJobLeader                Code = 2107
	NotWholeHetJob                 Code = 2108
	ConfiglessDisabled             Code = 2125
)

var messages = map[Code]string{
	NoError:                        "No error",
	Unspecified:                    "Unspecified error",
	ControllerConnect:              "Unable to contact slurm controller (connect failure)",
	NotSupported:                   "Requested operation not supported on this system",
	AuthCredInvalid:                "Invalid authentication credential",
	AuthExpired:                    "Authentication credential expired",
	TokenGenerationFailed:          "Token Generation failed.",
	PluginNotLoaded:                "Required plugin type not loaded or initialized",
	InvalidPartitionName:           "Invalid partition name specified",
	DefaultPartitionNotSet:         "No partition specified or system default partition",
	AccessDenied:                   "Access/permission denied",
	RequestedNodesNotInPartition:   "Requested nodes not in this partition",
	TooManyRequestedCPUs:           "More processors requested than permitted",
	InvalidNodeCount:               "Node count specification invalid",
	JobScriptMissing:               "Job script not specified",
	RequestedNodeConfigUnavailable: "Requested node configuration is not available",
	RequestedPartConfigUnavailable: "Requested partition configuration not available now",
	NodesBusy:                      "Requested nodes are busy",
	InvalidJobID:                   "Invalid job id specified",
	InvalidNodeName:                "Invalid node name specified",
	TransitionStateNoUpdate:        "Job can not be altered now, try again later",
	AlreadyDone:                    "Job/step already completing or completed",
	AccountingPolicy:               "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
	InvalidTimeLimit:               "Requested time limit is invalid (missing or exceeds some limit)",
	Disabled:                       "Requested operation is presently disabled",
	InvalidTimeValue:               "Invalid time specified",
	ReservationAccess:              "Access denied to requested reservation",
	ReservationInvalid:             "Requested reservation is invalid",
	ReservationNotUsable:           "Requested reservation not usable now",
	ReservationOverlap:             "Requested reservation overlaps with another reservation",
	JobHeld:                        "Job is in held state, pending scheduler release",
	InvalidGRES:                    "Invalid generic resource (gres) specification",
	InvalidArray:                   "Invalid job array specification",
	NotHetJob:                      "Job not heterogeneous job",
	NotHetJobLeader:                "Job not heterogeneous job leader",
	NotWholeHetJob:                 "Operation not permitted on individual component of heterogeneous job",
	InvalidDependency:              "Job dependency problem",
	JobNotPending:                  "Job is no longer pending execution",
	PartitionInUse:                 "Partition is in use",
	JobPending:                     "Job is pending execution",
	BatchOnly:                      "Only batch jobs are accepted or processed",
	EnvironmentMissing:             "Environment is missing in job",
	InStandbyUseBackup:             "Controller is in standby mode, try a different controller",
	SocketTimeout:                  "Socket timed out on send/recv operation",
	InvalidNodeState:               "Invalid node state specified",
	InvalidTaskMemory:              "Memory required by task is not available",
	InvalidAccount:                 "Invalid account or account/partition combination specified",
	InvalidParentAccount:           "Invalid parent account specified",
	SameParentAccount:              "Account already child of parent account specified",
	InvalidQOS:                     "Invalid qos specification",
	QOSPreemptionLoop:              "QOS Preemption loop detected",
	InvalidAssoc:                   "Invalid or unknown association",
	NodeAlreadyExists:              "Node already exists in the node table",
	NodeTableFull:                  "Unable to add node, node table is full",
	JobsRunningOnAssoc:             "Job(s) active, cancel job(s) before remove",
	NoRemoveDefaultAccount:         "You can not remove the default account of a user",
	NoRemoveDefaultQOS:             "This request would make it so some associations would not have access to their default qos.",
	InvalidQuery:                   "Query empty or not RFC7320 compliant",
	DataConvFailed:                 "Unable to convert Data type",
	NoChangeInData:                 "Data has not changed since time specified",
	UserIDMissing:                  "Invalid user id",
	ConfiglessDisabled:             "ConfigLess mode is disabled in slurm configuration.",
	DataAmbiguousModify:            "Request matched more than one object to modify. Modifications must only apply to a single object. Try adding more properties to make update match a unique object.",
	DataAmbiguousQuery:             "Request matched more than one object to query. Request is limited to query of a single matching object.",
}

// Message returns Slurm's fixed text for code (slurm_strerror).
func (c Code) Message() string {
	if m, ok := messages[c]; ok {
		return m
	}
	return fmt.Sprintf("Unknown error %d", int32(c))
}

// Error is a failure with a Slurm error number. Detail is the
// request-specific explanation slurmrestd puts in "description" and the
// commands print before the generic message ("invalid partition specified:
// nosuch").
type Error struct {
	Code   Code
	Detail string
}

// New returns an *Error for code with a formatted detail.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Error implements error.
func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Code.Message()
	}
	return e.Detail + ": " + e.Code.Message()
}

// Is makes errors.Is(err, slurmerr.InvalidJobID) style matching possible on
// the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Detail == ""
}

// CodeOf returns the Slurm error number carried by err, or Unspecified.
func CodeOf(err error) Code {
	if err == nil {
		return NoError
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Code
	}
	return Unspecified
}

// Sentinel returns a matchable error value for code (errors.Is target).
func Sentinel(code Code) error { return &Error{Code: code} }
