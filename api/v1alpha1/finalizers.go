package v1alpha1

// SolveFinalizer keeps an Optimization whose solve may be running until the
// controller has stopped that solve: without it a deleted Optimization
// vanishes first and its Job or goroutine runs on to its deadline.
const SolveFinalizer = "routeopt.io/solve"
