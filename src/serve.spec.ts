import { testConfigFor } from '../test/support/unit-config';
import { printMailWarnings } from './serve';

// docs/mail.md, Configuration: PUBLIC_URL unset means links on localhost, and the start says so.
describe('printMailWarnings', () => {
  const printed = (config: Parameters<typeof printMailWarnings>[0]) => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      printMailWarnings(config);
      return write.mock.calls.map((call) => String(call[0]));
    } finally {
      write.mockRestore();
    }
  };

  it('warns when PUBLIC_URL is unset, naming the URL links will use, and says where mail goes without SMTP_URL', () => {
    const config = testConfigFor({ publicUrl: 'http://localhost:3000', publicUrlDefaulted: true });
    expect(printed(config)).toEqual([
      '  Warning: PUBLIC_URL is unset: links in e-mail point to http://localhost:3000\n',
      '  SMTP_URL is unset: customer e-mail is written as .eml files under DATA_DIR/mail/\n',
    ]);
  });

  it('says nothing when both are set', () => {
    const config = testConfigFor({ publicUrl: 'https://licences.example.com', publicUrlDefaulted: false });
    expect(printed({ ...config, mail: { ...config.mail, smtpUrl: 'smtp://smtp.example.com' } })).toEqual([]);
  });
});
