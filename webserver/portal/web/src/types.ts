// The REST API's shapes the portal reads (docs/API.md).

export type Status = "queued" | "running" | "completed" | "failed" | "cancelled";

export interface Me {
  company: { id: string; name: string };
  scopes: string[];
}

export interface OptimizationRecord {
  id: string;
  name: string | null;
  status: Status;
  stage: string;
  progress: number;
  strategy: string;
  orders: number;
  vehicles: number;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  finished_at: string | null;
  links: { self: string; result: string; web: string };
}

export interface OptimizationList {
  items: OptimizationRecord[];
  page: number;
  page_size: number;
  total: number;
}

export interface Stop {
  seq: number;
  order_ref: string;
  address: string;
  latitude: number;
  longitude: number;
  arrival_s: number;
  start_s: number;
  depart_s: number;
  wait_s: number;
  late_s: number;
  leg_distance_m: number;
  leg_travel_s: number;
  customer?: string | null;
  time_window_start?: string | null;
  time_window_end?: string | null;
}

/** Where a route starts or ends (fleet constraints); address is "" for a place given by coordinates. */
export interface Place {
  latitude: number;
  longitude: number;
  address: string;
}

/** A break taken on a route, after the stop with seq after_seq (0: before the first stop). */
export interface RouteBreak {
  start_s: number;
  end_s: number;
  after_seq: number;
}

export interface Route {
  vehicle_ref: string;
  driver_name: string | null;
  depart_s: number;
  return_s: number;
  distance_m: number;
  load: number;
  capacity: number;
  stops: Stop[];
  polyline?: string | null;
  /** Present only when the request gave a start, an end or open_end (then on every route). */
  start?: Place;
  /** null for an open route, which ends at its last stop; absent as start is. */
  end?: Place | null;
  breaks?: RouteBreak[];
  /** Per named load dimension, when the request named dimensions. */
  loads?: Record<string, number>;
  capacities?: Record<string, number>;
}

export interface Unassigned {
  order_ref: string;
  reason: string;
  message: string;
}

export interface Warning {
  code: string;
  message: string;
  order_ref?: string | null;
}

export interface KPIs {
  orders_total: number;
  orders_assigned: number;
  orders_unassigned: number;
  vehicles_available: number;
  vehicles_used: number;
  distance_m: number;
  drive_seconds: number;
  route_seconds: number;
  late_stops: number;
  avg_utilization: number;
}

export interface Result {
  id: string;
  status: Status;
  strategy: string;
  kpis: KPIs;
  routes: Route[];
  unassigned: Unassigned[];
  warnings: Warning[];
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
}

export interface NewApiKey extends ApiKey {
  key: string;
}

export interface ExportRecord {
  id: string;
  format: string;
  download_url: string;
  expires_at: string;
}
