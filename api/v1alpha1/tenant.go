package v1alpha1

// Tenancy: a company is a namespace labelled with TenantLabel, named
// TenantNamespacePrefix + its id. Secrets never live there but in the
// operator's namespace, labelled with the tenant they belong to.
const (
	// TenantLabel marks a tenant namespace with its company id, and every
	// Secret of the operator's namespace with the company it belongs to.
	TenantLabel = "routeopt.io/tenant"
	// TenantDisplayNameAnnotation holds a tenant's company name.
	TenantDisplayNameAnnotation = "routeopt.io/display-name"
	// TenantNamespacePrefix starts every tenant namespace's name.
	TenantNamespacePrefix = "tenant-"
	// DefaultOperatorNamespace is where routeopt runs and keeps its Secrets.
	DefaultOperatorNamespace = "routeopt-system"
)

// TenantNamespace is the namespace of company id.
func TenantNamespace(id string) string { return TenantNamespacePrefix + id }
