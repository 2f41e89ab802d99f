import { Inject, Injectable, Logger } from '@nestjs/common';
import { SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { SnowflakeConfig } from '../config/snowflake-config';
import { Clock } from './core/clock';
import { PeerClockSample, judgePeerClocks, offsetOf } from './core/peer-clock-check';
import { PeerEndpoint, WorkerIdRegistry } from './core/worker-id-registry';
import { startRefused } from './registries/start-refusal';
import { SNOWFLAKE_CLOCK } from './snowflake.tokens';

/** How far back a peer's last report may be for it to count as running. */
const RECENT_REPORTS = 10;

/**
 * Meituan's start-up peer clock check: reads the clock of the other running instances over HTTP
 * (`GET /api/snowflake/time`) and refuses to start when ours differs from their mean by more than
 * SNOWFLAKE_PEER_MAX_SKEW_MS. Peers that do not answer in time are left out.
 */
@Injectable()
export class PeerClockService {
  private readonly logger = new Logger(PeerClockService.name);

  constructor(
    @Inject(SNOWFLAKE_CONFIG) private readonly snowflake: SnowflakeConfig,
    @Inject(SNOWFLAKE_CLOCK) private readonly clock: Clock,
  ) {}

  async check(registry: WorkerIdRegistry): Promise<void> {
    const { peerMaxSkewMs, reportIntervalMs } = this.snowflake;
    if (peerMaxSkewMs === 0) {
      return;
    }
    const peers = await registry.peers(this.clock.now() - RECENT_REPORTS * reportIntervalMs);
    if (peers.length === 0) {
      return;
    }
    const samples = (await Promise.all(peers.map((peer) => this.sample(peer)))).filter(
      (s): s is PeerClockSample => s !== null,
    );
    const verdict = judgePeerClocks(samples, peerMaxSkewMs);
    if (!verdict.ok) {
      throw startRefused(
        `this clock differs from the mean of ${verdict.samples} peer(s) by ${Math.round(-verdict.meanOffsetMs)} ms (more than SNOWFLAKE_PEER_MAX_SKEW_MS=${peerMaxSkewMs}); refusing to start`,
      );
    }
    if (verdict.samples > 0) {
      this.logger.log(`peer clock check: ${verdict.samples} peer(s), mean offset ${Math.round(verdict.meanOffsetMs)} ms`);
    }
  }

  private async sample(peer: PeerEndpoint): Promise<PeerClockSample | null> {
    const host = peer.ip.includes(':') ? `[${peer.ip}]` : peer.ip;
    const url = `http://${host}:${peer.port}/api/snowflake/time`;
    const sentAt = this.clock.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(this.snowflake.peerTimeoutMs) });
      const body = (await res.json()) as { timestamp?: unknown };
      const receivedAt = this.clock.now();
      if (!res.ok || typeof body.timestamp !== 'number' || !Number.isFinite(body.timestamp)) {
        return null;
      }
      return { peer: `${peer.ip}:${peer.port}`, offsetMs: offsetOf(body.timestamp, sentAt, receivedAt) };
    } catch (err) {
      this.logger.debug(`peer ${url} did not answer: ${(err as Error).message}`);
      return null;
    }
  }
}
