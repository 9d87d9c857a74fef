package booblik

import "fmt"

// What the versions this client sends mean: for each capability of packages/protocol's API table
// (packages/protocol/src/api-table/rows.ts) the client uses, the first version of the API that has
// it. The table keeps a capability in every later version, so a broker serves one when its highest
// version of the API is at least that; TestCapabilityTableIsTheTypeScriptOnes holds these to it.
const (
	produceExpectingVersion = 2 // PRODUCE expectedOffset: the batch lands only where the partition ends at it
	routedVersion           = 3 // PRODUCE and FETCH followsRoutes: NOT_PRIMARY with the route, not proxied
	// fetchVersion is always 2 (FETCH held): version 1 has no wait, and a consumer without one polls in a loop.
	fetchVersion            = 2
	replicaReadVersion      = 4 // FETCH replicaReadable: an in-sync replica may answer from its copy
	metadataRoutesVersion   = 2 // METADATA routes: the spec revision and a route per partition
	metadataRevisionVersion = 3 // METADATA atRevision: a minimum revision and flags
	metadataReplicasVersion = 4 // METADATA replicaRoutes: RouteV2 routes
	listReplicasVersion     = 2 // LIST replicaRoutes
)

// capability is a capability's name in the API table.
type capability string

const (
	capExpectedOffset  capability = "expectedOffset"
	capFollowsRoutes   capability = "followsRoutes"
	capHeld            capability = "held"
	capReplicaReadable capability = "replicaReadable"
	capRoutes          capability = "routes"
	capAtRevision      capability = "atRevision"
	capReplicaRoutes   capability = "replicaRoutes"
)

type apiCapability struct {
	api apiKey
	cap capability
}

// firstVersionWith is the constants above by the API table's names.
var firstVersionWith = map[apiCapability]int16{
	{apiProduce, capExpectedOffset}: produceExpectingVersion,
	{apiProduce, capFollowsRoutes}:  routedVersion,
	{apiFetch, capHeld}:             fetchVersion,
	{apiFetch, capFollowsRoutes}:    routedVersion,
	{apiFetch, capReplicaReadable}:  replicaReadVersion,
	{apiMetadata, capRoutes}:        metadataRoutesVersion,
	{apiMetadata, capAtRevision}:    metadataRevisionVersion,
	{apiMetadata, capReplicaRoutes}: metadataReplicasVersion,
	{apiList, capReplicaRoutes}:     listReplicasVersion,
}

// speaks reports whether a broker whose highest versions are versions (apiKey -> version, as
// API_VERSIONS said) serves c of api.
func speaks(versions map[int16]int16, api apiKey, c capability) bool {
	first, ok := firstVersionWith[apiCapability{api, c}]
	if !ok {
		panic(fmt.Sprintf("booblik: capability %s of apiKey %d is not in the table", c, api))
	}
	return versions[int16(api)] >= first
}
