import { describe, expect, it } from 'vitest';
import { classifyIPv4, classifyIp, isLoopbackIPv4, parseIPv4, type BlockReason } from './address.js';

// Each blocked range: first address, one inside, last address, and the neighbours just outside it.
const RANGES: ReadonlyArray<{
  reason: BlockReason;
  first: string;
  middle: string;
  last: string;
  before?: string;
  after?: string;
}> = [
  { reason: 'unspecified', first: '0.0.0.0', middle: '0.1.2.3', last: '0.255.255.255', after: '1.0.0.0' },
  {
    reason: 'private',
    first: '10.0.0.0',
    middle: '10.1.2.3',
    last: '10.255.255.255',
    before: '9.255.255.255',
    after: '11.0.0.0',
  },
  {
    reason: 'cgnat',
    first: '100.64.0.0',
    middle: '100.100.100.100',
    last: '100.127.255.255',
    before: '100.63.255.255',
    after: '100.128.0.0',
  },
  {
    reason: 'loopback',
    first: '127.0.0.0',
    middle: '127.0.0.1',
    last: '127.255.255.255',
    before: '126.255.255.255',
    after: '128.0.0.0',
  },
  {
    reason: 'link_local',
    first: '169.254.0.0',
    middle: '169.254.169.254',
    last: '169.254.255.255',
    before: '169.253.255.255',
    after: '169.255.0.0',
  },
  {
    reason: 'private',
    first: '172.16.0.0',
    middle: '172.20.10.1',
    last: '172.31.255.255',
    before: '172.15.255.255',
    after: '172.32.0.0',
  },
  {
    reason: 'protocol_assignment',
    first: '192.0.0.0',
    middle: '192.0.0.170',
    last: '192.0.0.255',
    before: '191.255.255.255',
    after: '192.0.1.0',
  },
  {
    reason: 'documentation',
    first: '192.0.2.0',
    middle: '192.0.2.1',
    last: '192.0.2.255',
    before: '192.0.1.255',
    after: '192.0.3.0',
  },
  {
    reason: 'relay',
    first: '192.88.99.0',
    middle: '192.88.99.1',
    last: '192.88.99.255',
    before: '192.88.98.255',
    after: '192.88.100.0',
  },
  {
    reason: 'private',
    first: '192.168.0.0',
    middle: '192.168.1.1',
    last: '192.168.255.255',
    before: '192.167.255.255',
    after: '192.169.0.0',
  },
  {
    reason: 'benchmarking',
    first: '198.18.0.0',
    middle: '198.19.0.1',
    last: '198.19.255.255',
    before: '198.17.255.255',
    after: '198.20.0.0',
  },
  {
    reason: 'documentation',
    first: '198.51.100.0',
    middle: '198.51.100.7',
    last: '198.51.100.255',
    before: '198.51.99.255',
    after: '198.51.101.0',
  },
  {
    reason: 'documentation',
    first: '203.0.113.0',
    middle: '203.0.113.42',
    last: '203.0.113.255',
    before: '203.0.112.255',
    after: '203.0.114.0',
  },
  { reason: 'multicast', first: '224.0.0.0', middle: '239.1.2.3', last: '239.255.255.255', before: '223.255.255.255' },
  { reason: 'reserved', first: '240.0.0.0', middle: '250.1.2.3', last: '255.255.255.254' },
];

describe('classifyIPv4', () => {
  describe.each(RANGES)('$reason $first - $last', ({ reason, first, middle, last, before, after }) => {
    it.each([first, middle, last])('blocks %s', (address) => {
      expect(classifyIPv4(address)).toEqual({ allowed: false, reason });
    });
    it.each([before, after].filter((address): address is string => address !== undefined))(
      'allows the neighbour %s',
      (address) => {
        expect(classifyIPv4(address)).toEqual({ allowed: true });
      },
    );
  });

  it('names the broadcast address apart from the reserved range around it', () => {
    expect(classifyIPv4('255.255.255.255')).toEqual({ allowed: false, reason: 'broadcast' });
  });

  it('names the cloud metadata address link-local', () => {
    expect(classifyIPv4('169.254.169.254')).toEqual({ allowed: false, reason: 'link_local' });
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '192.0.1.1', '192.31.196.1', '223.255.255.255'])(
    'allows the public address %s',
    (address) => {
      expect(classifyIPv4(address)).toEqual({ allowed: true });
    },
  );

  it.each([
    '',
    '127.1',
    '0177.0.0.1',
    '0x7f.0.0.1',
    '2130706433',
    '256.0.0.1',
    '1.2.3.4.',
    ' 1.2.3.4',
    '1.2.3.-4',
    '01.2.3.4',
  ])('refuses the non-canonical spelling %j as malformed', (address) => {
    expect(classifyIPv4(address)).toEqual({ allowed: false, reason: 'malformed' });
  });
});

describe('parseIPv4', () => {
  it('turns a dotted-quad into its 32-bit value', () => {
    expect(parseIPv4('0.0.0.0')).toBe(0);
    expect(parseIPv4('127.0.0.1')).toBe(0x7f000001);
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffff);
    expect(parseIPv4('1.2.3')).toBeNull();
  });
});

describe('classifyIp', () => {
  it.each([
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:8.8.8.8',
    '::ffff:7f00:1',
    '2606:2800:220:1::1',
    '[::1]',
    'fe80::1',
  ])('refuses the IPv6 address %s', (address) => {
    expect(classifyIp(address)).toEqual({ allowed: false, reason: 'ipv6' });
  });

  it('classifies IPv4 addresses like classifyIPv4', () => {
    expect(classifyIp('8.8.8.8')).toEqual({ allowed: true });
    expect(classifyIp('10.0.0.1')).toEqual({ allowed: false, reason: 'private' });
  });
});

describe('isLoopbackIPv4', () => {
  it('is true for 127.0.0.0/8 only', () => {
    expect(isLoopbackIPv4('127.0.0.1')).toBe(true);
    expect(isLoopbackIPv4('127.255.255.255')).toBe(true);
    expect(isLoopbackIPv4('10.0.0.1')).toBe(false);
    expect(isLoopbackIPv4('8.8.8.8')).toBe(false);
  });
});
