package webserver

// CreateFieldManager is the field manager of the API's creates.
const CreateFieldManager = "routeopt-api"
