import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { classifySendError, displayName, MailSendError, MailTransport } from './mail-transport';

const mail = {
  id: '1',
  kind: 'license_issued',
  to: { name: 'Mika', address: 'mika@shop.example' },
  subject: 's',
  text: 't',
  html: '<p>t</p>',
};

/** A server that speaks SMTP until the message body starts arriving, then drops the connection (docs/mail.md, Retries). */
function droppingServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((socket: Socket) => {
    let inData = false;
    socket.write('220 test ESMTP\r\n');
    socket.on('data', (chunk) => {
      if (inData) return void socket.destroy();
      for (const line of chunk.toString('utf8').split('\r\n').filter(Boolean)) {
        if (/^EHLO|^HELO/i.test(line)) socket.write('250 test\r\n');
        else if (/^DATA/i.test(line)) {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else socket.write('250 ok\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

describe('MailTransport (docs/mail.md, Retries)', () => {
  it('a connection dropped mid-message is a temporary failure (retried)', async () => {
    const { server, url } = await droppingServer();
    const transport = new MailTransport(
      { smtpUrl: url, from: 'keys@vendor.example', brandName: 'V', disabledKinds: [], retryScheduleSeconds: [1] },
      '/nonexistent',
    );
    try {
      const err = await transport.send(mail).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(MailSendError);
      expect((err as MailSendError).permanent).toBe(false);
    } finally {
      transport.close();
      server.close();
    }
  });

  it('a refused connection is temporary', async () => {
    const transport = new MailTransport(
      { smtpUrl: 'smtp://127.0.0.1:1', from: 'keys@vendor.example', brandName: 'V', disabledKinds: [], retryScheduleSeconds: [1] },
      '/nonexistent',
    );
    await expect(transport.send(mail)).rejects.toMatchObject({ permanent: false });
    transport.close();
  });

  it('SMTP 4xx is temporary, 5xx permanent, an envelope nodemailer refuses permanent', () => {
    expect(classifySendError(Object.assign(new Error('busy'), { responseCode: 421 })).permanent).toBe(false);
    expect(classifySendError(Object.assign(new Error('no such user'), { responseCode: 550 })).permanent).toBe(true);
    expect(classifySendError(Object.assign(new Error('bad syntax'), { responseCode: 503 })).permanent).toBe(true);
    expect(classifySendError(Object.assign(new Error('No recipients defined'), { code: 'EENVELOPE' })).permanent).toBe(true);
    expect(classifySendError(Object.assign(new Error('Connection closed'), { code: 'ECONNECTION' })).permanent).toBe(false);
  });

  it('attacker: display names lose line breaks and control characters', () => {
    expect(displayName('Evil\r\nBcc: a@b.c\u0000')).toBe('Evil Bcc: a@b.c');
    expect(displayName('Đorđe Petrović')).toBe('Đorđe Petrović');
  });
});
