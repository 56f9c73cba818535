//go:build cgo && pmix

package main

/*
#cgo pkg-config: pmix
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <pmix.h>
#include <pmix_server.h>

extern void goFence(char *nspace, char *data, size_t ndata, void *cbfunc, void *cbdata);
extern void goAbort(char *nspace, int rank, int status, char *msg);

static pmix_status_t client_connected(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cbfunc, void *cbdata) {
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t client_finalized(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cbfunc, void *cbdata) {
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t abort_fn(const pmix_proc_t *proc, void *obj, int status, const char msg[],
	pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
	goAbort((char *)proc->nspace, (int)proc->rank, status, (char *)(msg ? msg : ""));
	return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo,
	char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata) {
	if (nprocs < 1)
		return PMIX_ERR_BAD_PARAM;
	goFence((char *)procs[0].nspace, data, ndata, (void *)cbfunc, cbdata);
	return PMIX_SUCCESS;
}

static pmix_status_t dmodex_fn(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
	pmix_modex_cbfunc_t cbfunc, void *cbdata) {
	return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_server_module_t module = {
	.client_connected = client_connected,
	.client_finalized = client_finalized,
	.abort = abort_fn,
	.fence_nb = fence_nb,
	.direct_modex = dmodex_fn,
};

static pmix_status_t server_init(char *tmpdir) {
	pmix_info_t info[2];
	PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
	PMIX_INFO_LOAD(&info[1], PMIX_SERVER_SYSTEM_SUPPORT, NULL, PMIX_BOOL);
	info[1].value.data.flag = false;
	return PMIx_server_init(&module, info, 2);
}

// A call whose result comes through a callback, waited for.
typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int done;
	pmix_status_t status;
} waiter_t;

static void waiter_init(waiter_t *w) {
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->done = 0;
	w->status = PMIX_SUCCESS;
}

static void op_done(pmix_status_t status, void *cbdata) {
	waiter_t *w = cbdata;
	pthread_mutex_lock(&w->mu);
	w->status = status;
	w->done = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->mu);
}

static pmix_status_t waiter_wait(waiter_t *w, pmix_status_t rc) {
	if (rc == PMIX_OPERATION_SUCCEEDED)
		return PMIX_SUCCESS;
	if (rc != PMIX_SUCCESS)
		return rc;
	pthread_mutex_lock(&w->mu);
	while (!w->done)
		pthread_cond_wait(&w->cond, &w->mu);
	pthread_mutex_unlock(&w->mu);
	return w->status;
}

// register_nspace describes a step to the server as Slurm's pmix plugin
// does: its sizes, nodes and ranks, and each local rank's place.
static pmix_status_t register_nspace(char *nspace, uint32_t size, uint32_t nlocal, char *peers,
	char *nodes, char *ppn, char *host, uint32_t nodeid, uint32_t *ranks, uint32_t *noderanks) {
	char *node_regex = NULL, *ppn_regex = NULL;
	pmix_status_t rc = PMIx_generate_regex(nodes, &node_regex);
	if (rc != PMIX_SUCCESS)
		return rc;
	rc = PMIx_generate_ppn(ppn, &ppn_regex);
	if (rc != PMIX_SUCCESS) {
		free(node_regex);
		return rc;
	}
	size_t njob = 13, n = njob + nlocal;
	pmix_info_t *info;
	PMIX_INFO_CREATE(info, n);
	uint32_t zero = 0;
	pmix_rank_t leader = ranks[0];
	bool no = false;
	PMIX_INFO_LOAD(&info[0], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[1], PMIX_JOB_SIZE, &size, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[2], PMIX_MAX_PROCS, &size, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[3], PMIX_LOCAL_SIZE, &nlocal, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[4], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
	PMIX_INFO_LOAD(&info[5], PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
	PMIX_INFO_LOAD(&info[6], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
	PMIX_INFO_LOAD(&info[7], PMIX_PROC_MAP, ppn_regex, PMIX_REGEX);
	PMIX_INFO_LOAD(&info[8], PMIX_JOBID, nspace, PMIX_STRING);
	PMIX_INFO_LOAD(&info[9], PMIX_APPNUM, &zero, PMIX_UINT32);
	PMIX_INFO_LOAD(&info[10], PMIX_SPAWNED, &no, PMIX_BOOL);
	PMIX_INFO_LOAD(&info[11], PMIX_HOSTNAME, host, PMIX_STRING);
	PMIX_INFO_LOAD(&info[12], PMIX_NODEID, &nodeid, PMIX_UINT32);
	for (uint32_t i = 0; i < nlocal; i++) {
		pmix_data_array_t *arr;
		PMIX_DATA_ARRAY_CREATE(arr, 9, PMIX_INFO);
		pmix_info_t *pi = arr->array;
		pmix_rank_t r = ranks[i];
		uint16_t local = i, noderank = noderanks[i];
		PMIX_INFO_LOAD(&pi[0], PMIX_RANK, &r, PMIX_PROC_RANK);
		PMIX_INFO_LOAD(&pi[1], PMIX_GLOBAL_RANK, &r, PMIX_PROC_RANK);
		PMIX_INFO_LOAD(&pi[2], PMIX_APP_RANK, &r, PMIX_PROC_RANK);
		PMIX_INFO_LOAD(&pi[3], PMIX_APPNUM, &zero, PMIX_UINT32);
		PMIX_INFO_LOAD(&pi[4], PMIX_APPLDR, &zero, PMIX_PROC_RANK);
		PMIX_INFO_LOAD(&pi[5], PMIX_LOCAL_RANK, &local, PMIX_UINT16);
		PMIX_INFO_LOAD(&pi[6], PMIX_NODE_RANK, &noderank, PMIX_UINT16);
		PMIX_INFO_LOAD(&pi[7], PMIX_HOSTNAME, host, PMIX_STRING);
		PMIX_INFO_LOAD(&pi[8], PMIX_NODEID, &nodeid, PMIX_UINT32);
		PMIX_INFO_LOAD(&info[njob + i], PMIX_PROC_DATA, arr, PMIX_DATA_ARRAY);
		PMIX_DATA_ARRAY_FREE(arr);
	}
	waiter_t w;
	waiter_init(&w);
	rc = waiter_wait(&w, PMIx_server_register_nspace(nspace, (int)nlocal, info, n, op_done, &w));
	PMIX_INFO_FREE(info, n);
	free(node_regex);
	free(ppn_regex);
	return rc;
}

static pmix_status_t register_client(char *nspace, uint32_t rank, uint32_t uid, uint32_t gid) {
	pmix_proc_t proc;
	PMIX_PROC_LOAD(&proc, nspace, rank);
	waiter_t w;
	waiter_init(&w);
	return waiter_wait(&w, PMIx_server_register_client(&proc, uid, gid, NULL, op_done, &w));
}

// setup_fork returns the client's variables as one string, entries
// separated by NUL, or NULL.
static char *setup_fork(char *nspace, uint32_t rank, pmix_status_t *rc) {
	pmix_proc_t proc;
	PMIX_PROC_LOAD(&proc, nspace, rank);
	char **env = NULL;
	*rc = PMIx_server_setup_fork(&proc, &env);
	if (*rc != PMIX_SUCCESS)
		return NULL;
	size_t len = 1;
	for (char **e = env; e && *e; e++)
		len += strlen(*e) + 1;
	char *out = calloc(len, 1), *p = out;
	for (char **e = env; e && *e; e++) {
		size_t l = strlen(*e);
		memcpy(p, *e, l);
		p += l + 1;
		free(*e);
	}
	free(env);
	return out;
}

static void deregister_nspace(char *nspace) {
	waiter_t w;
	waiter_init(&w);
	PMIx_server_deregister_nspace(nspace, op_done, &w);
	waiter_wait(&w, PMIX_SUCCESS);
}

static void release_copy(void *cbdata) { free(cbdata); }

// complete_fence hands a fence's data (every server's, one after the
// other) to the server.
static void complete_fence(void *cbfunc, void *cbdata, char *data, size_t ndata, int failed) {
	pmix_modex_cbfunc_t f = (pmix_modex_cbfunc_t)cbfunc;
	char *copy = NULL;
	if (ndata > 0) {
		copy = malloc(ndata);
		memcpy(copy, data, ndata);
	}
	f(failed ? PMIX_ERROR : PMIX_SUCCESS, copy, ndata, cbdata, release_copy, copy);
}

static const char *status_text(pmix_status_t rc) { return PMIx_Error_string(rc); }
*/
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// pmixError turns a PMIx status into an error.
func pmixError(what string, rc C.pmix_status_t) error {
	if rc == C.PMIX_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s", what, C.GoString(C.status_text(rc)))
}

// serverInit starts the node's PMIx server with its rendezvous files in
// tmpdir.
func serverInit(tmpdir string) error {
	cs := C.CString(tmpdir)
	defer C.free(unsafe.Pointer(cs))
	return pmixError("PMIx_server_init", C.server_init(cs))
}

// registerStep tells the server of a step: its namespace, its sizes and
// layout, and its local ranks, each allowed to connect as uid/gid. It
// returns each local rank's variables.
func registerStep(nspace string, size int, nodes []string, ranks [][]int, me int, host string, uid, gid uint32) (map[int][]string, error) {
	local := ranks[me]
	if len(local) == 0 {
		return nil, fmt.Errorf("no ranks on node %d", me)
	}
	peers := make([]string, len(local))
	for i, r := range local {
		peers[i] = strconv.Itoa(r)
	}
	ppn := make([]string, len(ranks))
	for i, rs := range ranks {
		s := make([]string, len(rs))
		for j, r := range rs {
			s[j] = strconv.Itoa(r)
		}
		ppn[i] = strings.Join(s, ",")
	}
	cNs, cPeers := C.CString(nspace), C.CString(strings.Join(peers, ","))
	cNodes, cPPN, cHost := C.CString(strings.Join(nodes, ",")), C.CString(strings.Join(ppn, ";")), C.CString(host)
	defer func() {
		for _, p := range []*C.char{cNs, cPeers, cNodes, cPPN, cHost} {
			C.free(unsafe.Pointer(p))
		}
	}()
	cRanks := C.malloc(C.size_t(len(local)) * 4)
	cNodeRanks := C.malloc(C.size_t(len(local)) * 4)
	defer C.free(cRanks)
	defer C.free(cNodeRanks)
	rs := unsafe.Slice((*C.uint32_t)(cRanks), len(local))
	nrs := unsafe.Slice((*C.uint32_t)(cNodeRanks), len(local))
	for i, r := range local {
		rs[i], nrs[i] = C.uint32_t(r), C.uint32_t(i)
	}
	rc := C.register_nspace(cNs, C.uint32_t(size), C.uint32_t(len(local)), cPeers, cNodes, cPPN, cHost, C.uint32_t(me),
		(*C.uint32_t)(cRanks), (*C.uint32_t)(cNodeRanks))
	if err := pmixError("PMIx_server_register_nspace", rc); err != nil {
		return nil, err
	}
	env := map[int][]string{}
	for _, r := range local {
		if err := pmixError("PMIx_server_register_client", C.register_client(cNs, C.uint32_t(r), C.uint32_t(uid), C.uint32_t(gid))); err != nil {
			return nil, err
		}
		var rc C.pmix_status_t
		out := C.setup_fork(cNs, C.uint32_t(r), &rc)
		if err := pmixError("PMIx_server_setup_fork", rc); err != nil {
			return nil, err
		}
		env[r] = splitNUL(out)
		C.free(unsafe.Pointer(out))
	}
	return env, nil
}

// splitNUL reads setup_fork's NUL-separated list.
func splitNUL(p *C.char) []string {
	var out []string
	for {
		s := C.GoString(p)
		if s == "" {
			return out
		}
		out = append(out, s)
		p = (*C.char)(unsafe.Add(unsafe.Pointer(p), len(s)+1))
	}
}

// deregisterStep forgets a step's namespace.
func deregisterStep(nspace string) {
	cs := C.CString(nspace)
	defer C.free(unsafe.Pointer(cs))
	C.deregister_nspace(cs)
}

// completeFence answers a fence the server asked for.
func completeFence(cbfunc, cbdata unsafe.Pointer, data []byte, failed bool) {
	var p *C.char
	if len(data) > 0 {
		p = (*C.char)(C.CBytes(data))
		defer C.free(unsafe.Pointer(p))
	}
	f := C.int(0)
	if failed {
		f = 1
	}
	C.complete_fence(cbfunc, cbdata, p, C.size_t(len(data)), f)
}

//export goFence
func goFence(nspace *C.char, data *C.char, ndata C.size_t, cbfunc, cbdata unsafe.Pointer) {
	onFence(C.GoString(nspace), C.GoBytes(unsafe.Pointer(data), C.int(ndata)), cbfunc, cbdata)
}

//export goAbort
func goAbort(nspace *C.char, rank, status C.int, msg *C.char) {
	onAbort(C.GoString(nspace), int(rank), int(status), C.GoString(msg))
}
