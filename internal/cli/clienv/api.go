package clienv

import (
	"context"

	v0044 "github.com/droverhq/drover/openapi/v0044"
	v0045 "github.com/droverhq/drover/openapi/v0045"
)

// API is what the commands call of the generated slurmrestd v0.0.44
// client: the operations a command uses, rather than the generated
// Invoker with all of them. A program keeps the code of the methods its
// interfaces name, so the commands' binary links these operations and
// the wire types they carry, not the whole API. A command that needs
// another operation adds it here (*v0044.Client has them all).
type API interface {
	SlurmV0044DeleteJob(ctx context.Context, params v0044.SlurmV0044DeleteJobParams) (v0044.SlurmV0044DeleteJobRes, error)
	SlurmV0044DeleteJobs(ctx context.Context, request v0044.OptV0044KillJobsMsg) (v0044.SlurmV0044DeleteJobsRes, error)
	SlurmV0044DeleteNode(ctx context.Context, params v0044.SlurmV0044DeleteNodeParams) (v0044.SlurmV0044DeleteNodeRes, error)
	SlurmV0044DeleteReservation(ctx context.Context, params v0044.SlurmV0044DeleteReservationParams) (v0044.SlurmV0044DeleteReservationRes, error)
	SlurmV0044GetDiag(ctx context.Context) (v0044.SlurmV0044GetDiagRes, error)
	SlurmV0044GetJob(ctx context.Context, params v0044.SlurmV0044GetJobParams) (v0044.SlurmV0044GetJobRes, error)
	SlurmV0044GetJobs(ctx context.Context, params v0044.SlurmV0044GetJobsParams) (v0044.SlurmV0044GetJobsRes, error)
	SlurmV0044GetLicenses(ctx context.Context) (v0044.SlurmV0044GetLicensesRes, error)
	SlurmV0044GetNodes(ctx context.Context, params v0044.SlurmV0044GetNodesParams) (v0044.SlurmV0044GetNodesRes, error)
	SlurmV0044GetPartition(ctx context.Context, params v0044.SlurmV0044GetPartitionParams) (v0044.SlurmV0044GetPartitionRes, error)
	SlurmV0044GetPartitions(ctx context.Context, params v0044.SlurmV0044GetPartitionsParams) (v0044.SlurmV0044GetPartitionsRes, error)
	SlurmV0044GetPing(ctx context.Context) (v0044.SlurmV0044GetPingRes, error)
	SlurmV0044GetReconfigure(ctx context.Context) (v0044.SlurmV0044GetReconfigureRes, error)
	SlurmV0044GetReservation(ctx context.Context, params v0044.SlurmV0044GetReservationParams) (v0044.SlurmV0044GetReservationRes, error)
	SlurmV0044GetReservations(ctx context.Context, params v0044.SlurmV0044GetReservationsParams) (v0044.SlurmV0044GetReservationsRes, error)
	SlurmV0044GetShares(ctx context.Context, params v0044.SlurmV0044GetSharesParams) (v0044.SlurmV0044GetSharesRes, error)
	SlurmV0044PostJob(ctx context.Context, request v0044.OptV0044JobDescMsg, params v0044.SlurmV0044PostJobParams) (v0044.SlurmV0044PostJobRes, error)
	SlurmV0044PostJobAllocate(ctx context.Context, request v0044.OptV0044JobAllocReq) (v0044.SlurmV0044PostJobAllocateRes, error)
	SlurmV0044PostJobSubmit(ctx context.Context, request v0044.OptV0044JobSubmitReq) (v0044.SlurmV0044PostJobSubmitRes, error)
	SlurmV0044PostNewNode(ctx context.Context, request v0044.OptV0044OpenapiCreateNodeReq) (v0044.SlurmV0044PostNewNodeRes, error)
	SlurmV0044PostNode(ctx context.Context, request v0044.OptV0044UpdateNodeMsg, params v0044.SlurmV0044PostNodeParams) (v0044.SlurmV0044PostNodeRes, error)
	SlurmV0044PostReservation(ctx context.Context, request v0044.OptV0044ReservationDescMsg) (v0044.SlurmV0044PostReservationRes, error)
	SlurmdbV0044DeleteAccount(ctx context.Context, params v0044.SlurmdbV0044DeleteAccountParams) (v0044.SlurmdbV0044DeleteAccountRes, error)
	SlurmdbV0044DeleteAssociations(ctx context.Context, params v0044.SlurmdbV0044DeleteAssociationsParams) (v0044.SlurmdbV0044DeleteAssociationsRes, error)
	SlurmdbV0044DeleteSingleQos(ctx context.Context, params v0044.SlurmdbV0044DeleteSingleQosParams) (v0044.SlurmdbV0044DeleteSingleQosRes, error)
	SlurmdbV0044DeleteUser(ctx context.Context, params v0044.SlurmdbV0044DeleteUserParams) (v0044.SlurmdbV0044DeleteUserRes, error)
	SlurmdbV0044GetAccounts(ctx context.Context, params v0044.SlurmdbV0044GetAccountsParams) (v0044.SlurmdbV0044GetAccountsRes, error)
	SlurmdbV0044GetAssociations(ctx context.Context, params v0044.SlurmdbV0044GetAssociationsParams) (v0044.SlurmdbV0044GetAssociationsRes, error)
	SlurmdbV0044GetJob(ctx context.Context, params v0044.SlurmdbV0044GetJobParams) (v0044.SlurmdbV0044GetJobRes, error)
	SlurmdbV0044GetJobs(ctx context.Context, params v0044.SlurmdbV0044GetJobsParams) (v0044.SlurmdbV0044GetJobsRes, error)
	SlurmdbV0044GetQos(ctx context.Context, params v0044.SlurmdbV0044GetQosParams) (v0044.SlurmdbV0044GetQosRes, error)
	SlurmdbV0044GetUsers(ctx context.Context, params v0044.SlurmdbV0044GetUsersParams) (v0044.SlurmdbV0044GetUsersRes, error)
	SlurmdbV0044PostAccounts(ctx context.Context, request v0044.OptV0044OpenapiAccountsResp) (v0044.SlurmdbV0044PostAccountsRes, error)
	SlurmdbV0044PostAccountsAssociation(ctx context.Context, request v0044.OptV0044OpenapiAccountsAddCondResp) (v0044.SlurmdbV0044PostAccountsAssociationRes, error)
	SlurmdbV0044PostAssociations(ctx context.Context, request v0044.OptV0044OpenapiAssocsResp) (v0044.SlurmdbV0044PostAssociationsRes, error)
	SlurmdbV0044PostQos(ctx context.Context, request v0044.OptV0044OpenapiSlurmdbdQosResp, params v0044.SlurmdbV0044PostQosParams) (v0044.SlurmdbV0044PostQosRes, error)
	SlurmdbV0044PostUsers(ctx context.Context, request v0044.OptV0044OpenapiUsersResp) (v0044.SlurmdbV0044PostUsersRes, error)
	SlurmdbV0044PostUsersAssociation(ctx context.Context, request v0044.OptV0044OpenapiUsersAddCondResp, params v0044.SlurmdbV0044PostUsersAssociationParams) (v0044.SlurmdbV0044PostUsersAssociationRes, error)
}

// API45 is what the commands call of the v0.0.45 client: the operations
// v0.0.44 lacks (partitions made and removed at run time).
type API45 interface {
	SlurmV0045DeletePartition(ctx context.Context, params v0045.SlurmV0045DeletePartitionParams) (v0045.SlurmV0045DeletePartitionRes, error)
	SlurmV0045PostPartitions(ctx context.Context, request v0045.OptV0045OpenapiPartitionsModReq) (v0045.SlurmV0045PostPartitionsRes, error)
}

var (
	_ API   = (*v0044.Client)(nil)
	_ API45 = (*v0045.Client)(nil)
)
