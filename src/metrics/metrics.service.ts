import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { METRICS_CONFIG } from '../config/config-tokens';
import { MetricsConfig } from '../config/metrics-config';
import { HistoryMonitor } from '../id-history/history-monitor';
import { LeaseMonitor } from '../lease/lease-monitor';
import { NumberMonitor } from '../numbers/number-monitor';
import { NumberStatus } from '../numbers/number-status';
import { QueueStatePort } from '../queue-id/queue-state.port';
import { SnowflakeClockWaits } from '../snowflake/clock-waits';
import { SnowflakeReports } from '../snowflake/snowflake-reports';
import { CounterTotals } from './core/activity-history';
import { TtlSnapshot } from './core/ttl-snapshot';
import { registerHistoryMetrics } from './history-metrics';
import { HttpCounters, installHttpMetrics } from './http-metrics.hook';
import { MetricsStateReader } from './metrics-state.reader';
import { registerNumberMetrics } from './number-metrics';
import { MetricsLeader } from './metrics-leader';
import { ShardFamilies } from './shard-families';
import { TextSource, registerStateMetrics } from './state-metrics';
import { StateSnapshot } from './state-snapshot';

/**
 * A scrape past the TTL answers with the last read's values while that read is younger than this
 * many TTLs (20 s at the default 5 s), and starts the next read; older, it waits for a read.
 */
export const STALE_TTLS = 4;

/**
 * The Prometheus registry of this app instance (not prom-client's global one, so several apps in
 * one process keep apart). Counters are incremented in-process; the state gauges are read on
 * scrape through a TtlSnapshot: at most one read of Redis/MySQL per METRICS_STATE_TTL_MS,
 * shared by concurrent scrapes.
 */
@Injectable()
export class MetricsService implements OnModuleInit, OnApplicationShutdown {
  readonly register = new Registry();
  /** The per-shard families (METRICS_PER_SHARD=true), written after the registry's text; null when off. */
  readonly shardFamilies: ShardFamilies | null;
  private unsubscribe: (() => void) | null = null;
  private unsubscribeRefusals: (() => void) | null = null;
  private unsubscribeLeases: (() => void) | null = null;
  private unsubscribeNumbers: (() => void) | null = null;
  private readonly state: TtlSnapshot<StateSnapshot>;
  /** Families written as text after prom-client's exposition (the per-app queue gauges and forecast), in order. */
  private readonly texts: TextSource[] = [];
  private http: HttpCounters | null = null;
  private refills: Counter<'trigger' | 'outcome'> | null = null;

  constructor(
    @Inject(METRICS_CONFIG) config: MetricsConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly queueState: QueueStatePort,
    private readonly clockWaits: SnowflakeClockWaits,
    reader: MetricsStateReader,
    private readonly leaseMonitor: LeaseMonitor,
    private readonly numberMonitor: NumberMonitor,
    private readonly numberStatus: NumberStatus,
    private readonly historyMonitor: HistoryMonitor,
    private readonly snowflakeReports: SnowflakeReports,
    private readonly leader: MetricsLeader,
  ) {
    this.shardFamilies = config.perShard ? new ShardFamilies() : null;
    this.state = new TtlSnapshot(() => reader.read(), config.stateTtlMs, { staleMs: (STALE_TTLS - 1) * config.stateTtlMs });
  }

  onModuleInit(): void {
    const register = this.register;
    collectDefaultMetrics({ register, prefix: 'shardleaf_' });
    // Gauges named like counters (`_total`), which `promtool check metrics` refuses; the same
    // counts stay in shardleaf_nodejs_active_{handles,requests,resources}{type}.
    for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
      register.removeSingleMetric(`shardleaf_nodejs_${name}`);
    }
    this.http = installHttpMetrics(this.adapterHost.httpAdapter.getInstance<FastifyInstance>(), register);
    const refills = new Counter({
      name: 'shardleaf_queue_refills_total',
      help: 'Segment allocations from id_alloc, by trigger (sweep/admin, ahead = background refill after a pop, demand = a request waited) and outcome',
      labelNames: ['trigger', 'outcome'],
      registers: [register],
    });
    this.refills = refills;
    const refillSeconds = new Histogram({
      name: 'shardleaf_queue_refill_duration_seconds',
      help: 'Time of a segment allocation from id_alloc (the MySQL transaction)',
      labelNames: ['trigger'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [register],
    });
    this.unsubscribe = this.queueState.onRefill((trigger, outcome, seconds) => {
      refills.inc({ trigger, outcome });
      refillSeconds.observe({ trigger }, seconds);
    });
    const refusals = new Counter({
      name: 'shardleaf_queue_pushes_refused_total',
      help: "Segments refused by their list's push marker (a gap), by reason: older (a repeated or overtaken push, a deleted app), row_behind (id_alloc was behind the list: a restored database or a shared key prefix; the row was moved past the marker), marker_invalid (the marker is not an index: the shard allocates nothing until it is fixed) or above_limit (allocated before max_limit_id was lowered)",
      labelNames: ['reason'],
      registers: [register],
    });
    refusals.inc({ reason: 'older' }, 0);
    refusals.inc({ reason: 'row_behind' }, 0);
    refusals.inc({ reason: 'marker_invalid' }, 0);
    refusals.inc({ reason: 'above_limit' }, 0);
    this.unsubscribeRefusals = this.queueState.onRefusal((reason) => refusals.inc({ reason }));
    const leases = new Counter({
      name: 'shardleaf_leases_total',
      help: 'Lease requests (POST …/lease) by generator and outcome (granted, refused = 4xx/410, failed = backend)',
      labelNames: ['generator', 'outcome'],
      registers: [register],
    });
    const leaseIds = new Counter({
      name: 'shardleaf_lease_ids_total',
      help: 'IDs handed out in granted leases, by generator (a client may leave part of a lease unused: a gap)',
      labelNames: ['generator'],
      registers: [register],
    });
    this.unsubscribeLeases = this.leaseMonitor.subscribe((generator, outcome, ids) => {
      leases.inc({ generator, outcome });
      if (ids > 0n) {
        leaseIds.inc({ generator }, Number(ids));
      }
    });
    registerStateMetrics(register, () => this.state.get(), (source) => this.addText(source), this.shardFamilies);
    this.unsubscribeNumbers = registerNumberMetrics(register, this.numberMonitor, this.numberStatus);
    registerHistoryMetrics(register, this.historyMonitor);
    const waits = this.clockWaits;
    new Counter({
      name: 'shardleaf_snowflake_clock_rollback_waits_total',
      help: 'Clock rollbacks within SNOWFLAKE_CLOCK_TOLERANCE_MS waited out (refusals: shardleaf_http_errors_total{error="SNOWFLAKE_CLOCK_BACKWARDS"})',
      registers: [register],
      collect() {
        this.reset();
        this.inc(waits.count);
      },
    });
    new Counter({
      name: 'shardleaf_snowflake_clock_rollback_wait_seconds_total',
      help: 'Time spent waiting out clock rollbacks',
      registers: [register],
      collect() {
        this.reset();
        this.inc(waits.totalMs / 1000);
      },
    });
    const reports = this.snowflakeReports;
    new Counter({
      name: 'shardleaf_snowflake_lease_renewals_total',
      help: 'Periodic reports to the worker-id registry (lease renewals in redis and zk_recycle mode) by outcome: renewed, switched (a lost lease replaced by a fresh worker id), failed',
      labelNames: ['outcome'],
      registers: [register],
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(reports.counts)) {
          this.inc({ outcome }, n);
        }
      },
    });
  }

  onApplicationShutdown(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.unsubscribeRefusals?.();
    this.unsubscribeRefusals = null;
    this.unsubscribeLeases?.();
    this.unsubscribeLeases = null;
    this.unsubscribeNumbers?.();
    this.unsubscribeNumbers = null;
  }

  /**
   * The state behind the gauges, no older than METRICS_STATE_TTL_MS (waits for a read past it;
   * the history sampler's timer, off the request path), shared with scrapes.
   */
  stateSnapshot(): Promise<StateSnapshot> {
    return this.state.fresh();
  }

  /** This instance's counter totals, read from memory (for the dashboard's history). */
  async totals(): Promise<CounterTotals> {
    const out: CounterTotals = { ids: { queue: 0, segment: 0, snowflake: 0 }, refills: 0, refillFailures: 0, serverErrors: 0, clientErrors: 0 };
    if (!this.http || !this.refills) {
      return out;
    }
    for (const v of (await this.http.idsIssued.get()).values) {
      out.ids[String(v.labels.generator)] = v.value;
    }
    for (const v of (await this.refills.get()).values) {
      out.refills += v.value;
      if (v.labels.outcome === 'failed') {
        out.refillFailures += v.value;
      }
    }
    for (const v of (await this.http.requests.get()).values) {
      const status = Number(v.labels.status);
      if (status >= 500) {
        out.serverErrors += v.value;
      } else if (status >= 400) {
        out.clientErrors += v.value;
      }
    }
    return out;
  }

  /** Adds families written as text after prom-client's exposition, before the per-shard ones. */
  addText(source: TextSource): void {
    this.texts.push(source);
  }

  /**
   * prom-client's exposition, then the families written as text (per app), then the per-shard
   * families (when on), each block after a blank line. The lease is checked first (one Redis
   * command when this instance does not hold it), so every gauge of one scrape agrees.
   */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const leader = await this.leader.check();
    // Started together, so the gauges and the text share one state read (METRICS_STATE_TTL_MS=0 too).
    const [body, ...texts] = await Promise.all([this.register.metrics(), ...this.texts.map((text) => text(leader))]);
    const blocks = [body, ...texts.map((text) => `${text}\n`)];
    const perShard = this.shardFamilies === null ? '' : await this.shardFamilies.render(leader);
    if (perShard !== '') {
      blocks.push(`${perShard}\n`);
    }
    // Registry.metrics() and each block end with one newline: joined by '\n', a blank line between.
    return { contentType: this.register.contentType, body: blocks.join('\n') };
  }
}
