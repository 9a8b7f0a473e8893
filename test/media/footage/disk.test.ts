import { describe, expect, it } from 'vitest';
import { majorMinor, parseMountInfo } from '../../../src/media/footage/disk.js';

describe('mountinfo and device numbers', () => {
  it('reads the device, mount point, type and source of each line, unescaping paths', () => {
    const text = [
      '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
      '35 22 8:1 / /mnt/usb\\040disk rw,noatime shared:5 - ext4 /dev/sda1 rw,errors=remount-ro',
      '40 22 0:44 / /tmp/eg rw master:2 - tmpfs tmpfs rw,size=1024k',
      'garbage',
      '',
    ].join('\n');
    expect(parseMountInfo(text)).toEqual([
      { device: '254:0', mountPoint: '/', fsType: 'ext4', source: '/dev/vda' },
      { device: '8:1', mountPoint: '/mnt/usb disk', fsType: 'ext4', source: '/dev/sda1' },
      { device: '0:44', mountPoint: '/tmp/eg', fsType: 'tmpfs', source: 'tmpfs' },
    ]);
  });

  it("decodes Linux's dev_t", () => {
    expect(majorMinor(0x0801)).toBe('8:1');
    expect(majorMinor((254 << 8) | 0)).toBe('254:0');
    // glibc's encoding of a large minor: its high bits above the major's.
    expect(majorMinor(0x0000_0000_0010_0803)).toBe('8:259');
  });
});
