package scontrol

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cli/wireval"
	"github.com/droverhq/drover/internal/slurmerr"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// connectFailure is what Slurm's commands print when the controller cannot
// be reached (SLURM_COMMUNICATIONS_CONNECTION_ERROR).
const connectFailure = "Unable to contact slurm controller (connect failure)"

// restError is a failed controller request: the first entry of slurmrestd's
// errors[] when there is one, or a transport or decoding failure.
type restError struct {
	// Code is the Slurm error number (0 when the server gave none).
	Code int32
	// Message is Slurm's fixed text for Code (the "error" field), as the
	// commands print it after "slurm_load_jobs error: ".
	Message string
	// Description is slurmrestd's request-specific explanation.
	Description string
	// Status is the HTTP status, 0 when unknown.
	Status int
	err    error
}

func (e *restError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return e.Message
}

func (e *restError) Unwrap() error { return e.err }

// fromErrors returns the first error of a slurmrestd errors[] list, or nil.
func fromErrors(errs v0044.V0044OpenapiErrors, status int) *restError {
	for _, e := range errs {
		return fromProblem(readmodel.Problem{Number: e.ErrorNumber.Or(0), Error: e.Error.Or(""), Description: e.Description.Or("")}, status)
	}
	return nil
}

// fromAnswer is the error of a read answer, or nil: the first of its
// errors[] when that has a code, or when the answer is not the
// operation's success (status != 0), whose bare failure is Slurm's
// unspecified error. An answer of a kind the client does not know
// (status -1) fails the same way.
func fromAnswer(errs []readmodel.Problem, status int) *restError {
	if status == 0 {
		if len(errs) == 0 || errs[0].Number == 0 {
			return nil
		}
		return fromProblem(errs[0], 200)
	}
	if status < 0 {
		return fromStatus(0)
	}
	if len(errs) > 0 {
		return fromProblem(errs[0], status)
	}
	return fromStatus(status)
}

func fromProblem(p readmodel.Problem, status int) *restError {
	re := &restError{Code: p.Number, Message: p.Error, Description: p.Description, Status: status}
	if re.Message == "" {
		re.Message = slurmerr.Code(re.Code).Message()
	}
	return re
}

// fromStatus builds the error of a non-2xx answer whose body has no
// errors[] entry.
func fromStatus(status int) *restError {
	return &restError{Code: int32(slurmerr.Unspecified), Message: slurmerr.Unspecified.Message(), Status: status}
}

// fromTransport classifies an error returned by the generated client. A
// body the client could not decode may still carry slurmrestd's errors[]
// (real slurmrestd writes "results": null and error-only bodies that the
// strict decoder refuses); those are read leniently so that the command
// reports the controller's message. ok is false when the body decoded as an
// answer without errors, which callers treat as success.
func fromTransport(err error) (re *restError, failed bool) {
	var dbe *ogenerrors.DecodeBodyError
	if errors.As(err, &dbe) {
		var body struct {
			Errors []struct {
				Description string `json:"description"`
				ErrorNumber int32  `json:"error_number"`
				Error       string `json:"error"`
			} `json:"errors"`
		}
		if json.Unmarshal(dbe.Body, &body) == nil {
			for _, e := range body.Errors {
				msg := e.Error
				if msg == "" {
					msg = slurmerr.Code(e.ErrorNumber).Message()
				}
				return &restError{Code: e.ErrorNumber, Message: msg, Description: e.Description, err: err}, true
			}
			return nil, false
		}
		return &restError{Code: int32(slurmerr.Unspecified), Message: slurmerr.Unspecified.Message(), err: err}, true
	}
	return &restError{Code: 1001, Message: connectFailure, err: fmt.Errorf("controller request: %w", err)}, true
}

// u32 reads a number struct as Slurm's raw value, widened, for the
// records scontrol still reads off the wire (--json selection).
func u32(o v0044.OptV0044Uint32NoValStruct) uint64 { return uint64(wireval.U32(o)) }
